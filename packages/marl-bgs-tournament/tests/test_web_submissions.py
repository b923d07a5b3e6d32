"""Uploads: checked, stored, queued and run one at a time; refused when too large, badly named,
not a System file, beyond the queue, over the folder's bound or for a team without its token,
leaving nothing behind and the results untouched."""

from __future__ import annotations

import hashlib
import json
import secrets
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

MAGIC = b"MBGS-SYSTEM\n"
LIMIT = 64 << 10
Site = tuple[str, Path, Any]


def _post(
    url: str, content: bytes, team: str | None = None, name: str = "echo.sys", **fields: str
) -> Any:
    """Upload `content` as file `name` for `team` (default: a new team each time)."""
    team = f"team-{uuid.uuid4().hex[:12]}" if team is None else team
    return httpx.post(url + "/api/submissions", files={"file": (name, content)},
                      data={"team": team, **fields}, timeout=60)  # fmt: skip


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
    r = _post(url, MAGIC + b"name=echo", team="Echo-Team")
    assert r.status_code == 202, r.text
    sid, token = r.json()["id"], r.json()["token"]
    assert r.json()["state"] in ("queued", "running")
    assert r.json()["team"] == "Echo-Team"
    assert r.headers["cache-control"] == "no-store"
    status = _wait(url, sid)
    assert status["state"] == "done"
    assert status["message"] == ""
    assert status["sha256"] == hashlib.sha256(MAGIC + b"name=echo").hexdigest()
    assert status["file"] == "echo.sys"  # the uploader's name, as text only
    assert "token" not in status
    stored = folder / "submissions" / sid / "system.mbgs"
    assert runner.calls == [(folder.resolve(), stored.resolve(), "Echo-Team", token)]
    assert not stored.exists()  # done: the upload is deleted, its status kept
    assert json.loads((stored.parent / "status.json").read_text())["state"] == "done"
    assert not any(token.encode() in p.read_bytes() for p in folder.rglob("*") if p.is_file())
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
    [("", "missing or empty"), ("   ", "expected 1-64"), ("../../etc", "expected 1-64"),
     ("x" * 65, "expected 1-64"), ("<script>", "expected 1-64"), ("a\nb", "expected 1-64"),
     ("Echo Team", "expected 1-64"), ("organisers", "the organisers'")],
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
    assert sorted(p.name for p in (folder / "submissions" / sid).iterdir()) <= [
        "status.json", "system.mbgs"]  # fmt: skip
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


def test_a_team_name_is_taken_only_with_its_token(web_upload_site: Site) -> None:
    """The first accepted upload of a team gets its token, once; an upload naming that team
    without it, or with another, is refused (field `token`) and the service goes on."""
    url, folder, runner = web_upload_site
    first = _post(url, MAGIC + b"name=gamma", team="Gamma-Lab")
    token = first.json()["token"]
    _wait(url, first.json()["id"])
    registry = json.loads((folder / "teams.json").read_text())
    assert registry["teams"]["Gamma-Lab"]["sha256"] == hashlib.sha256(token.encode()).hexdigest()
    for fields, said in (({}, "'Gamma-Lab' is registered; present the token"),
                         ({"token": secrets.token_urlsafe(32)}, "not team 'Gamma-Lab''s token"),
                         ({"token": "x" * 7}, "expected the token")):  # fmt: skip
        r = _post(url, MAGIC + b"name=mallory", team="Gamma-Lab", **fields)
        assert r.status_code == 422, r.text
        assert r.json()["field"] == "token"
        assert said in r.json()["error"]
        assert httpx.get(url + "/api/ratings", timeout=30).status_code == 200
    r = _post(url, MAGIC + b"name=stray", team="Stray-Lab", token=secrets.token_urlsafe(32))
    assert (r.status_code, r.json()["field"]) == (422, "token")  # a new team has no token yet
    r = _post(url, MAGIC + b"name=base", team="Baselines")  # holds entries from before tokens
    assert (r.status_code, r.json()["field"]) == (422, "team")
    again = _post(url, MAGIC + b"name=gamma2", team="Gamma-Lab", token=token)
    assert again.status_code == 202, again.text
    assert "token" not in again.json()
    _wait(url, again.json()["id"])
    assert [c[2:] for c in runner.calls] == [("Gamma-Lab", token)] * 2
    refused = _post(url, b"not a System", team="Refused-Lab")  # refused: no token was issued
    assert refused.status_code == 422
    assert "Refused-Lab" not in (folder / "teams.json").read_text()
    board = httpx.get(url + "/", timeout=30).text
    assert "A team proves who it is with its token" in board
    assert "at most 0.0625 MiB" in board


def test_an_upload_named_like_the_services_files_is_stored_apart(web_upload_site: Site) -> None:
    url, folder, runner = web_upload_site
    r = _post(url, MAGIC + b"name=collide", name="status.json")
    assert r.status_code == 202, r.text
    status = _wait(url, r.json()["id"])
    assert status["state"] == "done"
    assert status["file"] == "status.json"
    assert runner.calls[0][1].name == "system.mbgs"
    assert (folder / "challengers" / "collide" / "decision.json").exists()  # it read the upload


def test_failure_messages_show_no_server_paths(web_upload_site: Site) -> None:
    url, folder, _ = web_upload_site
    status = _wait(url, _post(url, MAGIC + b"LEAK").json()["id"])
    assert status["state"] == "failed"
    assert status["message"] == (
        "FileNotFoundError: [Errno 2] No such file or directory: 'entrants'"
    )
    assert str(folder.parent) not in json.dumps(status)
    assert httpx.get(url + "/api/ratings", timeout=30).status_code == 200


def test_the_submissions_folder_has_a_bound(web_upload_site_with: Any) -> None:
    """Over its byte bound, the folder takes no upload (507, the cause named) until the queued
    submissions are done and their uploads deleted; the service answers meanwhile."""
    with web_upload_site_with(max_submissions_bytes=1000) as (url, folder, runner):
        runner.gate.clear()
        first = _post(url, MAGIC + b"name=big" + b" " * 900)
        assert first.status_code == 202, first.text
        refused = _post(url, MAGIC + b"name=next")
        assert refused.status_code == 507
        assert "over its bound of 1000" in refused.json()["error"]
        assert refused.headers["connection"] == "close"
        assert httpx.get(url + "/", timeout=30).status_code == 200
        runner.gate.set()
        _wait(url, first.json()["id"])
        too_big = _post(url, MAGIC + b"x" * 1200)  # would take the folder over: refused too
        assert too_big.status_code == 507
        assert "over its bound of 1000" in too_big.json()["error"]
        after = _post(url, MAGIC + b"name=next")
        assert after.status_code == 202, after.text
        assert _wait(url, after.json()["id"])["state"] == "done"
        assert not list((folder / "submissions").rglob("system.mbgs"))


def _rss() -> int:
    """This process's resident memory now (bytes): the test server runs in it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def test_repeated_refused_uploads_leave_the_services_memory_as_it_was(
    web_season_dir: Path, web_running, tmp_path: Path
) -> None:
    """Six 15 MB System files refused by the real checker (their training touched a test map):
    each refusal names its cause, nothing of them stays in the service's memory (it reads the
    manifest and hashes members streamed; no program of an upload is loaded in the service),
    and the service answers after."""
    import shutil

    import jax.numpy as jnp
    import numpy as np

    import marl_bgs_eval as ev
    from marl_bgs_tournament import export_system
    from marl_bgs_tournament.cli import submission_checker
    from marl_bgs_tournament.web import create_app

    pad = np.random.default_rng(0).standard_normal(16 << 18).astype(np.float32)  # 16 MiB
    play = ev.random_system().act
    system = ev.system(lambda params, keys, memory, inputs: play(keys, memory, inputs),
                       name="heavy", params={"pad": jnp.asarray(pad)})  # fmt: skip
    path = tmp_path / "heavy.mbgs"
    export_system(system, path, team="heavy-lab", batch_sizes=(1,),
                  training={"maps": [47], "scenarios": []})  # fmt: skip
    body = path.read_bytes()
    assert len(body) > 15_000_000  # deflate takes little off random floats
    folder = tmp_path / "season"
    shutil.copytree(web_season_dir, folder)
    app = create_app(folder, checker=submission_checker, runner=lambda *a: None)
    with web_running(app) as url:
        first = _post(url, body, team="heavy-lab", name="heavy.mbgs")  # warm the path up
        assert first.status_code == 422, first.text
        before = _rss()
        for _ in range(6):
            r = _post(url, body, team="heavy-lab", name="heavy.mbgs")
            assert r.status_code == 422
            assert r.json()["field"] == "file"
            assert "test map" in r.json()["error"]
        grown = _rss() - before
        assert httpx.get(url + "/api/ratings", timeout=30).status_code == 200
    assert grown < 30 << 20, f"the service kept {grown >> 20} MiB of six refused 15 MB files"
    assert _stored(folder) == []  # nothing of them on disk either
