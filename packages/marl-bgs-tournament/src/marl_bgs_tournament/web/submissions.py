"""Submitted Systems waiting for their games: a bounded queue, one worker thread, and a status
file per submission (DIR/submissions/<id>/status.json: queued, running, done or failed).

The uploaded file is kept as DIR/submissions/<id>/system.mbgs (never under the uploader's name)
until its submission is done or failed; then only the status stays, and `Retention` prunes the
oldest statuses. The worker calls `runner(season_dir, path, team, token)` for one submission at
a time, in the order they came; whatever the runner raises marks that submission failed with
the message (server paths removed: `public_message`), and the worker goes on with the next.
"""

from __future__ import annotations

import contextlib
import json
import queue
import re
import shutil
import stat
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import SUFFIX
from marl_bgs_tournament.web.files import SeasonDataError, atomic_write, inside, is_plain_dir
from marl_bgs_tournament.web.season_files import read_json
from marl_bgs_tournament.web.store import UnknownNameError
from marl_bgs_tournament.web.uploads import Upload

Checker = Callable[[Path], None]
Runner = Callable[[Path, Path, str, str | None], None]
SUBMISSION_ID = re.compile(r"[0-9a-f]{32}")
STATUS = "status.json"
STORED = f"system{SUFFIX}"  # the uploaded file's name in its submission's folder
INCOMING = ".incoming"
FINISHED = ("done", "failed")
MAX_MESSAGE = 2000
# an absolute path (not the tail of a relative one): shown as its last part
ABSOLUTE_PATH = re.compile(r"(?<![\w.~-])/(?:[^\s'\"`/:,;()\[\]{}<>]+/)+([^\s'\"`/:,;()\[\]{}<>]*)")


class QueueFullError(Exception):
    """The queue holds as many submissions as it may; try again later."""


class StorageFullError(Exception):
    """The submissions folder holds more than its bound; try again later."""


@dataclass(frozen=True)
class Retention:
    """How much the submissions folder keeps: at most `max_bytes` in all (uploads are refused
    while it holds more), and the statuses of the newest `keep` finished submissions that are
    at most `keep_days` old."""

    max_bytes: int
    keep: int
    keep_days: float


def public_message(err: BaseException) -> str:
    """What a submitter may read of a checker's or runner's failure: its message with every
    absolute server path cut to its last part (the folder layout stays private)."""
    said = str(err) if isinstance(err, TournamentError) else f"{type(err).__name__}: {err}"
    return ABSOLUTE_PATH.sub(lambda m: m.group(1) or "/", said)[:MAX_MESSAGE]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def folder_bytes(folder: Path) -> int:
    """The bytes of the regular files under `folder` (links not followed)."""
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            st = path.lstat()
            total += st.st_size if stat.S_ISREG(st.st_mode) else 0
    return total


class Submissions:
    """The submissions of season folder `season_dir`, run by `runner`, at most `max_queue`
    waiting at once, the folder kept within `retention`."""

    def __init__(
        self, season_dir: Path, runner: Runner, max_queue: int, retention: Retention
    ) -> None:
        self.season_dir = season_dir
        self.folder = inside(season_dir, "submissions")
        self.runner = runner
        self.retention = retention
        self._queue: queue.Queue[str] = queue.Queue(maxsize=max_queue)
        self._tokens: dict[str, str | None] = {}  # queued submissions' tokens, never on disk
        self._write = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def incoming(self) -> Path:
        """The folder for uploads still being checked (made if missing)."""
        folder = self.folder / INCOMING
        folder.mkdir(parents=True, exist_ok=True)
        if not is_plain_dir(self.folder) or not is_plain_dir(folder):
            raise TournamentError("submissions: the season's submissions folder is a link")
        return folder

    def full(self) -> bool:
        """Whether no submission can wait now."""
        return self._queue.full()

    def check_room(self) -> None:
        """StorageFullError while the folder holds more than `retention.max_bytes`."""
        used = folder_bytes(self.folder) if self.folder.exists() else 0
        if used > self.retention.max_bytes:
            raise StorageFullError(
                f"the submissions folder holds {used} bytes, over its bound of "
                f"{self.retention.max_bytes}; try again when the queued submissions are done"
            )

    def accept(self, upload: Upload, token: str | None) -> dict:
        """Move a checked upload into submissions/<id>/ and queue it with its team's `token`
        (QueueFullError or StorageFullError: removed)."""
        sid = uuid.uuid4().hex
        folder = self.folder / sid
        folder.mkdir(parents=True)
        status = {
            "id": sid, "team": upload.team, "file": upload.filename, "bytes": upload.size,
            "sha256": upload.sha256, "state": "queued", "message": "", "created": _now(),
            "updated": _now(),
        }  # fmt: skip
        try:
            upload.path.replace(folder / STORED)
            self.check_room()
            self._save(status)
            self._tokens[sid] = token
            self._queue.put_nowait(sid)
        except queue.Full:
            self._tokens.pop(sid, None)
            shutil.rmtree(folder, ignore_errors=True)
            raise QueueFullError(f"{self._queue.maxsize} submissions wait already") from None
        except BaseException:
            self._tokens.pop(sid, None)
            shutil.rmtree(folder, ignore_errors=True)
            raise
        self.start()
        return status

    def status(self, sid: str) -> dict[str, Any]:
        """The status of submission `sid` (UnknownNameError for an unknown id)."""
        if SUBMISSION_ID.fullmatch(sid) is None:
            raise UnknownNameError(f"id: {sid[:40]!r} is not a submission id")
        path = self.folder / sid / STATUS
        if not path.is_file():
            raise UnknownNameError(f"id: no submission {sid}")
        status = read_json(path)
        if not isinstance(status, dict):
            raise SeasonDataError(f"submission {sid}: its status is not an object")
        return status

    def _save(self, status: dict[str, Any]) -> None:
        with self._write:
            path = self.folder / status["id"] / STATUS
            atomic_write(path, json.dumps(status, indent=1).encode())

    def _update(self, sid: str, **changes: Any) -> None:
        self._save({**self.status(sid), **changes, "updated": _now()})

    def _ids(self) -> list[str]:
        if not is_plain_dir(self.folder):
            return []
        return [p.name for p in self.folder.iterdir()
                if SUBMISSION_ID.fullmatch(p.name) and is_plain_dir(p)]  # fmt: skip

    def recover(self) -> None:
        """Mark submissions an earlier process left queued or running as failed, remove
        uploads left behind, and prune."""
        for sid in self._ids():
            try:
                if self.status(sid).get("state") not in FINISHED:
                    said = "interrupted: the service stopped before it finished"
                    self._update(sid, state="failed", message=said)
            except (TournamentError, UnknownNameError):
                continue
            (self.folder / sid / STORED).unlink(missing_ok=True)
        if is_plain_dir(self.folder / INCOMING):
            for part in (self.folder / INCOMING).glob("*.part"):
                part.unlink(missing_ok=True)
        self.prune()

    def prune(self) -> None:
        """Remove finished submissions beyond the newest `retention.keep` or older than
        `retention.keep_days` (queued and running ones stay)."""
        finished = []
        for sid in self._ids():
            path = self.folder / sid / STATUS
            try:
                if self.status(sid).get("state") in FINISHED:
                    finished.append((path.stat().st_mtime, sid))
            except (TournamentError, UnknownNameError, OSError):
                continue
        oldest = time.time() - self.retention.keep_days * 86400
        finished.sort(reverse=True)
        for k, (mtime, sid) in enumerate(finished):
            if k >= self.retention.keep or mtime < oldest:
                shutil.rmtree(self.folder / sid, ignore_errors=True)

    def start(self) -> None:
        """Start the worker thread (once)."""
        with self._write:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(target=self._work, name="submissions", daemon=True)
                self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the worker to stop after the submission it is running; wait up to `timeout`."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                sid = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                self._run(sid)
                with contextlib.suppress(OSError):
                    self.prune()
            finally:
                self._queue.task_done()

    def _run(self, sid: str) -> None:
        token = self._tokens.get(sid)
        final = {"state": "done", "message": ""}
        try:
            status = self.status(sid)
            self._update(sid, state="running")
            self.runner(self.season_dir, self.folder / sid / STORED, status["team"], token)
        except Exception as err:  # the runner's failure is this submission's, not the service's
            final = {"state": "failed", "message": public_message(err)}
        finally:
            # gone before the status says the submission finished (a poller may look at once)
            (self.folder / sid / STORED).unlink(missing_ok=True)
            self._tokens.pop(sid, None)
        self._try_update(sid, **final)

    def join(self) -> None:
        """Wait until every queued submission has run (for tests and shutdown)."""
        self._queue.join()

    def _try_update(self, sid: str, **changes: Any) -> None:
        # the folder may be gone meanwhile: then there is nothing left to record
        with contextlib.suppress(TournamentError, UnknownNameError, OSError):
            self._update(sid, **changes)
