"""Submitted Systems waiting for their games: a bounded queue, one worker thread, and a status
file per submission (DIR/submissions/<id>/status.json: queued, running, done or failed).

The worker calls `runner(season_dir, path, team)` for one submission at a time, in the order
they came; whatever the runner raises marks that submission failed with the message, and the
worker goes on with the next.
"""

from __future__ import annotations

import contextlib
import json
import queue
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.web.files import SeasonDataError, atomic_write, inside, is_plain_dir
from marl_bgs_tournament.web.season_files import read_json
from marl_bgs_tournament.web.store import UnknownNameError

Checker = Callable[[Path], None]
Runner = Callable[[Path, Path, str], None]
SUBMISSION_ID = re.compile(r"[0-9a-f]{32}")
STATUS = "status.json"
INCOMING = ".incoming"
FINISHED = ("done", "failed")


class QueueFullError(Exception):
    """The queue holds as many submissions as it may; try again later."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Submissions:
    """The submissions of season folder `season_dir`, run by `runner`, at most `max_queue`
    waiting at once."""

    def __init__(self, season_dir: Path, runner: Runner, max_queue: int) -> None:
        self.season_dir = season_dir
        self.folder = inside(season_dir, "submissions")
        self.runner = runner
        self._queue: queue.Queue[str] = queue.Queue(maxsize=max_queue)
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

    def accept(self, upload: Path, filename: str, team: str, size: int, sha256: str) -> dict:
        """Move a checked upload into submissions/<id>/ and queue it (QueueFullError: removed)."""
        sid = uuid.uuid4().hex
        folder = self.folder / sid
        folder.mkdir(parents=True)
        status = {
            "id": sid, "team": team, "file": filename, "bytes": size, "sha256": sha256,
            "state": "queued", "message": "", "created": _now(), "updated": _now(),
        }  # fmt: skip
        try:
            upload.replace(folder / filename)
            self._save(status)
            self._queue.put_nowait(sid)
        except queue.Full:
            shutil.rmtree(folder, ignore_errors=True)
            raise QueueFullError(f"{self._queue.maxsize} submissions wait already") from None
        except BaseException:
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

    def recover(self) -> None:
        """Mark submissions an earlier process left queued or running as failed."""
        if not is_plain_dir(self.folder):
            return
        for sub in self.folder.iterdir():
            if SUBMISSION_ID.fullmatch(sub.name) is None or not is_plain_dir(sub):
                continue
            try:
                if self.status(sub.name).get("state") not in FINISHED:
                    said = "interrupted: the service stopped before it finished"
                    self._update(sub.name, state="failed", message=said)
            except (TournamentError, UnknownNameError):
                continue

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
            finally:
                self._queue.task_done()

    def _run(self, sid: str) -> None:
        try:
            status = self.status(sid)
            self._update(sid, state="running")
            self.runner(self.season_dir, self.folder / sid / status["file"], status["team"])
        except Exception as err:  # the runner's failure is this submission's, not the service's
            said = str(err) if isinstance(err, TournamentError) else f"{type(err).__name__}: {err}"
            self._try_update(sid, state="failed", message=said[:2000])
        else:
            self._try_update(sid, state="done", message="")

    def join(self) -> None:
        """Wait until every queued submission has run (for tests and shutdown)."""
        self._queue.join()

    def _try_update(self, sid: str, **changes: Any) -> None:
        # the folder may be gone meanwhile: then there is nothing left to record
        with contextlib.suppress(TournamentError, UnknownNameError, OSError):
            self._update(sid, **changes)
