"""Hostile requests and broken season files: unknown names and path tricks are 404s, a flood of
requests is served, a stalled or trickling upload is cut off, a missing or corrupt file is a clean
error, and the service stays up."""

from __future__ import annotations

import asyncio
import json
import os
import select
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.web import check_host, create_app, serve

TRAVERSALS = [
    "/entrants/..%2F..%2Fetc",
    "/entrants/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/entrants/%2E%2E%2Fseason.json",
    "/api/entrants/..%2F..%2Fetc%2Fpasswd",
    "/api/entrants/nobody",
    "/replays/..%2Fratings.csv",
    "/api/replays/..%2F..%2Fetc%2Fpasswd",
    "/api/replays/5",
    "/api/replays/-1",
    "/api/replays/00000000000000000001",
    "/api/replays/1e3",
    "/replays/12",
    "/static/..%2F..%2F..%2Fseason.json",
    "/static/%2E%2E/%2E%2E/web/app.py",
    "/nothing-here",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_unknown_names_and_path_tricks_are_not_found(web_site: str, path: str) -> None:
    r = httpx.get(web_site + path, timeout=30)
    assert r.status_code == 404, r.text[:200]
    assert "root:" not in r.text
    assert "rulebook" not in r.text
    assert "import" not in r.text
    if path.startswith("/api/"):
        assert "error" in r.json()


def test_a_corrupt_replay_in_the_index_is_an_error_answer(web_site: str) -> None:
    r = httpx.get(web_site + "/api/replays/999", timeout=60)
    assert r.status_code == 503
    assert "game-999.replay.zip: not a valid replay" in r.json()["error"]
    assert "/tmp" not in r.json()["error"]  # no server paths
    assert httpx.get(web_site + "/replays/999", timeout=30).status_code == 200  # the page explains
    assert httpx.get(web_site + "/api/replays/0", timeout=60).status_code == 200


def test_a_flood_of_concurrent_requests_is_served(web_site: str) -> None:
    paths = ["/", "/matchups", "/entrants/alpha", "/api/ratings", "/api/replays/0",
             "/challengers", "/api/matchups", "/entrants/..%2Fx"]  # fmt: skip

    async def flood() -> list[int]:
        limits = httpx.Limits(max_connections=300)
        async with httpx.AsyncClient(base_url=web_site, timeout=120, limits=limits) as client:
            calls = [client.get(paths[k % len(paths)]) for k in range(300)]
            return [r.status_code for r in await asyncio.gather(*calls)]

    codes = asyncio.run(flood())
    want = [404 if paths[k % len(paths)].endswith("%2Fx") else 200 for k in range(300)]
    assert codes == want
    assert httpx.get(web_site + "/", timeout=30).status_code == 200


@pytest.fixture
def broken(web_season_dir: Path, tmp_path: Path, web_running: Any) -> Iterator[tuple[str, Path]]:
    """A server of a copy of the season folder that the test may break."""
    folder = tmp_path / "season"
    shutil.copytree(web_season_dir, folder)
    with web_running(create_app(folder)) as url:
        yield url, folder


def test_missing_or_bad_files_are_clean_errors_and_recover(broken: tuple[str, Path]) -> None:
    url, folder = broken
    ratings = (folder / "ratings.csv").read_bytes()
    (folder / "ratings.csv").unlink()
    page = httpx.get(url + "/", timeout=30)
    assert page.status_code == 503
    assert "ratings.csv: missing" in page.text
    api = httpx.get(url + "/api/ratings", timeout=30)
    assert api.status_code == 503
    assert "ratings.csv" in api.json()["error"]
    (folder / "ratings.csv").write_bytes(ratings.replace(b"Platinum", b"Platinum\n\x00,,", 1))
    assert httpx.get(url + "/api/ratings", timeout=30).status_code == 503
    bad = ratings.decode().splitlines()
    bad[1] = bad[1].replace(bad[1].split(",")[2], "not-an-elo", 1)
    (folder / "ratings.csv").write_text("\n".join(bad))
    said = httpx.get(url + "/api/ratings", timeout=30).json()["error"]
    assert "ratings.csv: row 1, column elo" in said
    (folder / "ratings.csv").write_bytes(ratings)  # the runner wrote it again: shown at once
    assert httpx.get(url + "/", timeout=30).status_code == 200

    (folder / "season.json").write_text('{"rulebook": "v1", "maps": [47')
    page = httpx.get(url + "/", timeout=30)
    assert page.status_code == 200
    assert "season.json: not JSON" in page.text
    assert httpx.get(url + "/api/season", timeout=30).status_code == 503
    assert httpx.get(url + "/entrants/alpha", timeout=30).status_code == 200

    (folder / "matchups.csv").write_text("system_a,alpha\nalpha,7\n")
    assert "expected a finite number in [0.0, 1.0]" in httpx.get(url + "/matchups").text

    (folder / "measures.csv").write_bytes(b"\xff\xfe garbage")
    e = httpx.get(url + "/api/entrants/alpha", timeout=30).json()
    assert e["measures"] is None
    assert any("measures.csv" in p for p in e["problems"])

    decision = folder / "challengers" / "mallory" / "decision.json"
    decision.parent.mkdir(parents=True)
    decision.write_text(json.dumps({"name": "mallory", "admitted": "yes"}))
    page = httpx.get(url + "/challengers", timeout=30)
    assert page.status_code == 200
    assert "mallory/decision.json" in page.text


def test_index_entries_cannot_point_outside_the_season(broken: tuple[str, Path]) -> None:
    url, folder = broken
    entry = {"game": 0, "system_a": "random", "system_b": "idle", "map": 47, "result": "draw"}
    (folder / "replays.json").write_text(json.dumps([{**entry, "file": "../../etc/passwd"}]))
    r = httpx.get(url + "/api/replays/0", timeout=30)
    assert r.status_code == 503
    assert "replays/game-0.replay.zip" in r.json()["error"]
    good = {**entry, "file": "replays/game-0.replay.zip"}
    (folder / "replays.json").write_text(json.dumps([good]))
    outside = folder.parent / "elsewhere.zip"
    shutil.move(folder / "replays" / "game-0.replay.zip", outside)
    os.symlink(outside, folder / "replays" / "game-0.replay.zip")
    r = httpx.get(url + "/api/replays/0", timeout=30)
    assert r.status_code == 503
    assert "outside the season folder" in r.json()["error"]
    (folder / "replays.json").write_text("[" * 100_000)
    assert httpx.get(url + "/api/replays", timeout=30).status_code == 503
    assert httpx.get(url + "/", timeout=30).status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "example.com", ""])
def test_serve_refuses_every_host_but_loopback(web_season_dir: Path, host: str) -> None:
    with pytest.raises(TournamentError, match=r"^host: "):
        serve(web_season_dir, host=host, port=0)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.9", "::1", "localhost"])
def test_loopback_hosts_are_allowed(host: str) -> None:
    assert check_host(host) == host


def test_create_app_checks_its_settings(tmp_path: Path) -> None:
    with pytest.raises(TournamentError, match=r"^season_dir: "):
        create_app(tmp_path / "missing")
    with pytest.raises(TournamentError, match=r"^max_queue: "):
        create_app(tmp_path, max_queue=0)
    with pytest.raises(TournamentError, match=r"^max_upload_bytes: "):
        create_app(tmp_path, max_upload_bytes=True)
    with pytest.raises(TournamentError, match=r"^runner: "):
        create_app(tmp_path, runner=cast(Any, "run"))


def _answer_to(
    url: str, head: bytes, trickle: bytes = b"", every: float = 0.0
) -> tuple[bytes, float]:
    """Send `head` on a raw socket, then `trickle` a byte every `every` seconds until the server
    answers; returns what the server sent until it closed the connection, and the seconds."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as conn:
        conn.sendall(head)
        start, answer = time.monotonic(), b""
        for byte in trickle:
            if select.select([conn], [], [], every)[0]:
                break  # the server answered: it gave up on the body
            conn.sendall(bytes([byte]))
        while chunk := conn.recv(1 << 16):  # b"": the server closed the connection
            answer += chunk
        return answer, time.monotonic() - start


def test_a_stalled_or_trickling_upload_is_cut_off(web_upload_site_with: Any) -> None:
    """A body declared at 30 MiB that sends 1 KiB and then nothing is answered 408 and closed
    after the read timeout; one that trickles a byte at a time, after the body's time limit.
    Nothing is stored, and the service answers the next request."""
    with web_upload_site_with(max_upload_bytes=32 << 20, read_timeout_s=0.3,
                              body_timeout_s=0.9) as (url, folder, runner):  # fmt: skip
        boundary = "stall"
        part = (f'--{boundary}\r\nContent-Disposition: form-data; name="team"\r\n\r\nT\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                'filename="a.mbgs"\r\n\r\n').encode()  # fmt: skip

        def head(size: int) -> bytes:
            return (f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n"
                    f"Content-Type: multipart/form-data; boundary={boundary}\r\n\r\n"
                    ).encode() + part  # fmt: skip

        answer, seconds = _answer_to(url, head(30 << 20) + b"x" * 1024)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b"nothing arrived for 0.3 s; the request is closed" in answer
        assert 0.25 < seconds < 5
        answer, seconds = _answer_to(url, head(4096), b"y" * 25, every=0.1)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b"the upload took longer than 0.9 s" in answer
        assert 0.85 < seconds < 6
        assert not [p for p in (folder / "submissions").rglob("*") if p.is_file()]
        assert runner.calls == []
        assert httpx.get(url + "/", timeout=30).status_code == 200
        assert httpx.get(url + "/api/ratings", timeout=30).status_code == 200
