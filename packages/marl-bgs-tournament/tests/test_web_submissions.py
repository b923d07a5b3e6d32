"""Uploads: checked, stored, queued and run one at a time; refused when too large, badly named,
not a System file or beyond the queue, leaving nothing behind and the results untouched."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

MAGIC = b"MBGS-SYSTEM\n"
LIMIT = 64 << 10
Site = tuple[str, Path, Any]


def _post(url: str, content: bytes, team: str = "Echo Team", name: str = "echo.sys") -> Any:
    return httpx.post(url + "/api/submissions", files={"file": (name, content)},
                      data={"team": team}, timeout=60)  # fmt: skip


def _wait(url: str, sid: str, states: tuple[str, ...] = ("done", "failed")) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = httpx.get(f"{url}/api/submissions/{sid}", timeout=30).json()
        if status["state"] in states:
            return status
        time.sleep(0.05)
    raise AssertionError(f"submission {sid} never reached {states}")


def _stored(folder: Path) -> list[Path]:
    """Every file under submissions/ (incoming uploads included)."""
    root = folder / "submissions"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _results(folder: Path) -> dict[str, str]:
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest()
            for n in ("ratings.csv", "games.csv")}  # fmt: skip


def test_an_accepted_upload_runs_and_its_results_show(web_upload_site: Site) -> None:
    url, folder, runner = web_upload_site
    r = _post(url, MAGIC + b"name=echo")
    assert r.status_code == 202, r.text
    sid = r.json()["id"]
    assert r.json()["state"] in ("queued", "running")
    assert r.json()["team"] == "Echo Team"
    status = _wait(url, sid)
    assert status["state"] == "done"
    assert status["message"] == ""
    assert status["sha256"] == hashlib.sha256(MAGIC + b"name=echo").hexdigest()
    stored = folder / "submissions" / sid / "echo.sys"
    assert stored.read_bytes() == MAGIC + b"name=echo"
    assert runner.calls == [(folder.resolve(), stored.resolve(), "Echo Team")]
    board = httpx.get(url + "/", timeout=30).text  # rewritten ratings, no restart
    assert 'href="/entrants/echo">echo</a>' in board
    assert httpx.get(url + "/api/ratings", timeout=30).json()[0]["system"] == "echo"
    challengers = httpx.get(url + "/challengers", timeout=30).text
    assert 'href="/entrants/echo"' in challengers
    assert httpx.get(url + "/entrants/echo", timeout=30).status_code == 200


def test_a_failing_runner_is_recorded_and_changes_nothing(web_upload_site: Site) -> None:
    url, folder, _ = web_upload_site
    before = _results(folder)
    sid = _post(url, MAGIC + b"FAIL please").json()["id"]
    status = _wait(url, sid)
    assert status["state"] == "failed"
    assert status["message"] == "runner: the System crashed in game 3"
    assert _results(folder) == before
    assert httpx.get(url + "/", timeout=30).status_code == 200


def test_oversized_uploads_are_refused_and_nothing_is_stored(web_upload_site: Site) -> None:
    url, folder, runner = web_upload_site
    big = MAGIC + b"x" * (3 * LIMIT)
    r = _post(url, big)
    assert r.status_code == 413
    assert r.json()["field"] == "file"
    just_over = MAGIC + b"x" * (LIMIT + 1 - len(MAGIC))  # within the form's slack: read, refused
    r = _post(url, just_over)
    assert r.status_code == 413
    assert "larger than 65536 bytes" in r.json()["error"]

    boundary = "b0undary"
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="team"\r\n\r\nT\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n'
            "\r\n").encode()  # fmt: skip

    def chunks() -> Iterator[bytes]:  # no Content-Length: the size is counted as it streams
        yield head
        for _ in range(40):
            yield b"y" * 8192
        yield f"\r\n--{boundary}--\r\n".encode()

    kind = {"content-type": f"multipart/form-data; boundary={boundary}"}
    r = httpx.post(url + "/api/submissions", content=chunks(), headers=kind, timeout=60)
    assert r.status_code == 413
    assert _stored(folder) == []
    assert runner.calls == []


@pytest.mark.parametrize(
    ("team", "said"),
    [("", "missing or empty"), ("   ", "missing or empty"), ("../../etc", "expected 1-64"),
     ("x" * 65, "expected 1-64"), ("<script>", "expected 1-64"), ("a\nb", "expected 1-64")],
)  # fmt: skip
def test_bad_team_names_are_refused(web_upload_site: Site, team: str, said: str) -> None:
    url, folder, _ = web_upload_site
    r = _post(url, MAGIC + b"name=x", team=team)
    assert r.status_code == 422
    assert r.json()["field"] == "team"
    assert said in r.json()["error"]
    assert _stored(folder) == []


def test_files_the_checker_refuses_and_malformed_uploads(web_upload_site: Site) -> None:
    url, folder, runner = web_upload_site
    r = _post(url, b"MZ\x90\x00 not a System")
    assert r.status_code == 422
    assert r.json()["field"] == "file"
    assert "not a System file" in r.json()["error"]
    r = _post(url, b"")
    assert r.status_code == 422
    assert "empty" in r.json()["error"]
    r = httpx.post(url + "/api/submissions", data={"team": "T"}, timeout=30)
    assert r.status_code == 422
    assert r.json()["field"] == "file"
    r = httpx.post(url + "/api/submissions", content=b"{}", timeout=30,
                   headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 422
    two = [("file", ("a", MAGIC)), ("file", ("b", MAGIC))]
    r = httpx.post(url + "/api/submissions", files=two, data={"team": "T"}, timeout=30)
    assert r.status_code == 422
    r = _post(url, MAGIC + b"name=ok", name="../../../etc/cron.d/evil")
    assert r.status_code == 202
    sid = r.json()["id"]
    assert r.json()["file"] == "evil"
    assert (folder / "submissions" / sid / "evil").exists()
    r = _post(url, MAGIC + b"name=ok2", name="..")
    assert r.json()["file"] == "upload.bin"
    _wait(url, sid)
    _wait(url, r.json()["id"])
    assert len(runner.calls) == 2
    for bad in ("x", "..%2F..%2Fseason.json", "0" * 32, "g" * 32):
        assert httpx.get(f"{url}/api/submissions/{bad}", timeout=30).status_code == 404


def test_a_full_queue_refuses_uploads_and_the_service_stays_up(web_upload_site: Site) -> None:
    url, folder, runner = web_upload_site
    before = _results(folder)
    runner.gate.clear()  # the runner holds the first submission until the test lets it go
    first = _post(url, MAGIC + b"quiet").json()["id"]
    _wait(url, first, ("running",))
    queued = [_post(url, MAGIC + b"quiet") for _ in range(3)]
    assert [r.status_code for r in queued] == [202] * 3

    with ThreadPoolExecutor(max_workers=20) as pool:
        extra = list(pool.map(lambda _: _post(url, MAGIC + b"quiet"), range(20)))
    assert [r.status_code for r in extra] == [429] * 20
    assert all("queue is full" in r.json()["error"] for r in extra)
    assert httpx.get(url + "/", timeout=30).status_code == 200
    assert httpx.get(url + "/api/ratings", timeout=30).status_code == 200
    assert len(list((folder / "submissions").glob("*/status.json"))) == 4

    runner.gate.set()
    for sid in [first, *(r.json()["id"] for r in queued)]:
        assert _wait(url, sid)["state"] == "done"
    assert [c[1].parent.name for c in runner.calls] == [first, *(r.json()["id"] for r in queued)]
    assert _results(folder) == before
    assert not list((folder / "submissions" / ".incoming").iterdir())
