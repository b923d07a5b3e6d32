"""Every page and API route of a real server answers with the season's content."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from markupsafe import escape

from marl_bgs_eval import replay_files
from marl_bgs_eval.distinct import REPEATS_NOTE, ZERO_WIDTH_NOTE
from marl_bgs_eval.tdm import legend
from marl_bgs_eval.two_bridge import legend as bridge_legend
from marl_bgs_tournament.sandbox.limits import LIMITS
from marl_bgs_tournament.tdm import replay_key
from marl_bgs_tournament.two_bridge import replay_key as bridge_key
from marl_bgs_tournament.web import heatmap, tables


def _get(url: str) -> httpx.Response:
    return httpx.get(url, timeout=60)


def _games(season_dir: Path) -> list[dict[str, Any]]:
    return _rows(season_dir / "games.csv")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in row.items()} for row in pd.read_csv(path).to_dict("records")]


def test_leaderboard_shows_every_system_in_rank_order(web_site: str, web_season_dir: Path) -> None:
    r = _get(web_site + "/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    ratings = _rows(web_season_dir / "ratings.csv")
    body = r.text
    spots = [body.index(f'">{row["system"]}</a>') for row in ratings]
    assert spots == sorted(spots), "rows must follow the ranks"
    for row in ratings:
        assert f"{row['elo_low']:.0f} – {row['elo_high']:.0f}" in body
        assert f"{row['wins']}-{row['draws']}-{row['losses']}" in body
        mark = ' <span class="repeats" title="its games repeat">†</span>' if row["repeats"] else ""
        assert f'<td class="num distinct">{row["distinct_games"]}{mark}</td>' in body
        assert f"{100 * row['win_chance']:.1f}%" in body
        assert f'href="/entrants/{row["system"]}"' in body
    assert body.count('class="repeats"') == 1  # idle's pairings repeat (conftest)
    assert "(spawn-swapped pairs resampled within each pairing and map)" in body
    assert html.escape(ZERO_WIDTH_NOTE) in body
    assert f"† {html.escape(REPEATS_NOTE)}." in body
    assert html.escape("Delta <Labs>") in body
    assert "<Labs>" not in body
    for fact in ("20260707", "47, 48, 49, 50, 51", "Games per pairing", "v1"):
        assert fact in body
    assert "not a member" in body
    for limit, value, meaning in LIMITS.rows():  # the sandbox's limits, as the rulebook sets them
        assert f"<tr><td>{limit}</td><td>{value}</td><td>{escape(meaning)}</td></tr>" in body
    assert "<td>tick</td><td>2 s</td>" in body
    assert "https://" not in body
    assert "http://" not in body


def test_api_ratings_match_the_csv(web_site: str, web_season_dir: Path) -> None:
    got = _get(web_site + "/api/ratings").json()
    want = _rows(web_season_dir / "ratings.csv")
    assert [r["rank"] for r in got] == list(range(1, len(want) + 1))
    assert [r["system"] for r in got] == [w["system"] for w in want]
    for g, w in zip(got, want, strict=True):
        assert g["elo"] == pytest.approx(w["elo"])
        assert (g["elo_low"], g["elo_high"]) == pytest.approx((w["elo_low"], w["elo_high"]))
        assert g["elo_low"] <= g["elo"] <= g["elo_high"]
        assert g["member"] == bool(w["member"])
        assert g["team"] == w["team"]


def test_season_api(web_site: str, web_season_dir: Path) -> None:
    got = _get(web_site + "/api/season").json()
    want = json.loads((web_season_dir / "season.json").read_text())
    for key in ("rulebook", "maps", "games_per_pairing", "root_seed", "field", "entrants"):
        assert got[key] == want[key]
    assert [c["name"] for c in got["challengers"]] == ["delta", "bravo"]


def test_matchups_page_colours_each_cell_by_its_score(web_site: str, web_season_dir: Path) -> None:
    api = _get(web_site + "/api/matchups").json()
    matrix = pd.read_csv(web_season_dir / "matchups.csv", index_col="system_a")
    assert api["systems_a"] == list(matrix.index)
    assert api["systems_b"] == list(matrix.columns)
    page = _get(web_site + "/matchups").text
    for i, a in enumerate(api["systems_a"]):
        for j, b in enumerate(api["systems_b"]):
            want = matrix.loc[a, b]
            got = api["scores"][i][j]
            if a == b:
                assert got is None
                assert math.isnan(want)
                assert f'class="heat-none" title="{a} vs {b}: —"' in page
            else:
                assert got == pytest.approx(want)
                k = heatmap.step(want)
                assert f'class="heat-{k}" title="{a} vs {b}: {want:.2f}"' in page
    css = _get(web_site + "/heat.css").text
    assert all(heatmap.hex_colour(c) in css for c in heatmap.PALETTE)
    n = len(api["systems_b"])  # axis titles: rows are team A, columns team B
    assert '<th class="corner" rowspan="2" scope="col">team A ↓ · team B →</th>' in page
    assert f'<th class="axis" colspan="{n}" scope="colgroup">team B</th>' in page


def test_entrant_page_shows_rating_record_measures_and_replays(
    web_site: str, web_season_dir: Path
) -> None:
    r = _get(web_site + "/entrants/idle")
    assert r.status_code == 200
    body = r.text
    rating = next(r for r in _rows(web_season_dir / "ratings.csv") if r["system"] == "idle")
    assert f"{rating['elo']:.0f}" in body
    assert f"{rating['elo_low']:.0f} – {rating['elo_high']:.0f}" in body
    for m in _rows(web_season_dir / "measures.csv"):
        if m["system"] != "idle":
            continue
        if math.isnan(m["value"]):
            assert "heal_share" in body
            continue
        assert f"{m['value']:.4g}" in body
        assert f"{m['low']:.4g} – {m['high']:.4g}" in body
    seen = [(g["system_a"], g["system_b"], g["result"]) for g in _games(web_season_dir)]
    mine = [r for a, b, r in seen if (a, b) == ("idle", "alpha")]
    mine += [{"win": "loss", "draw": "draw", "loss": "win"}[r] for a, b, r in seen
             if (a, b) == ("alpha", "idle")]  # fmt: skip
    wins, draws, losses = (mine.count(k) for k in ("win", "draw", "loss"))
    api = _get(web_site + "/api/entrants/idle").json()
    alpha = next(o for o in api["record"] if o["opponent"] == "alpha")
    assert (alpha["wins"], alpha["draws"], alpha["losses"]) == (wins, draws, losses)
    assert f"{wins}-{draws}-{losses}" in body
    assert [g["game"] for g in api["replays"]] == [0, 999]
    assert 'href="/replays/0"' in body
    assert api["team"] == "Baselines"
    assert api["problems"] == []
    named = {m["measure"]: m for m in api["measures"]}
    assert named["heal_share"]["value"] is None
    assert named["kills_per_minute"]["unit"]


def test_challengers_page_lists_every_decision(web_site: str) -> None:
    body = _get(web_site + "/challengers").text
    rows = re.findall(r"<tr class=\"(admitted|refused)\">\s*<td><a href=\"/entrants/(\w+)\"", body)
    assert rows == [("refused", "delta"), ("admitted", "bravo")]
    assert "not admitted" in body
    assert ">952<" in body
    api = _get(web_site + "/api/challengers").json()
    assert [c["admitted"] for c in api["challengers"]] == [False, True]


def test_replay_pages_and_index(web_site: str) -> None:
    index = _get(web_site + "/api/replays").json()
    assert [g["game"] for g in index] == [0, 999]
    listing = _get(web_site + "/replays").text
    assert 'href="/replays/0"' in listing
    assert 'href="/replays/999"' in listing
    viewer = _get(web_site + "/replays/0")
    assert viewer.status_code == 200
    assert '<canvas id="field"' in viewer.text
    assert 'src="/static/replay.js"' in viewer.text
    assert 'data-api="/api/replays/0"' in viewer.text
    script = _get(web_site + "/static/replay.js")
    assert script.status_code == 200
    assert "getContext" in script.text
    shown = html.unescape(viewer.text)
    for e in replay_key.entries():  # the key, under the canvas
        assert f"</span> {e['meaning']}</li>" in shown, e
    assert 'href="/key.css"' in viewer.text
    assert _get(web_site + "/key.css").text == replay_key.css()


def test_replay_api_holds_every_tick_of_the_file(web_site: str, web_season_dir: Path) -> None:
    replay = replay_files.load(web_season_dir / "replays" / "game-0.replay.zip")
    got = _get(web_site + "/api/replays/0").json()
    assert (got["width"], got["height"]) == (20.0, 10.0)
    assert got["mode"] == replay.header["mode"] == "tdm-v2"
    assert got["system_a"] == "random"
    assert got["ticks"] == replay.ticks
    assert len(got["frames"]) == replay.ticks + 1
    assert got["obstacles"]
    assert {o["kind"] for o in got["obstacles"]} == {"pillar", "wall"}
    pos, health = replay.arrays["state.units.pos"], replay.arrays["state.units.health"]
    for t in (0, replay.ticks // 2, replay.ticks):
        frame = got["frames"][t]
        assert frame["tick"] == t
        assert [u["class"] for u in frame["units"]] == list("MWHRP" * 2)
        assert [u["team"] for u in frame["units"]] == [0] * 5 + [1] * 5
        for u in frame["units"]:
            assert (u["x"], u["y"]) == pytest.approx(tuple(pos[t, u["slot"]]), abs=1e-3)
            assert u["health"] == pytest.approx(health[t, u["slot"]], abs=0.01)
            assert u["max_health"] > 0
            assert u["health"] <= u["max_health"]
    assert got["result_text"] == legend.result_text(replay.header)
    assert got["result_text"] == "draw at the tick limit (0-0)"  # a quiet game to the limit
    assert got["status"] == f"random (A, blue) vs {got['system_b']} (B, red), map " \
        f"{got['map_name']}: {got['result_text']} in {replay.ticks} ticks"  # fmt: skip
    assert got["colours"] == replay_key.canvas_colours()
    assert (got["aura_radius"], got["aura_classes"]) == (2.0, ["M", "W"])
    a = replay.arrays
    for t, frame in enumerate(got["frames"]):  # badges and shields as the state has them
        for u in frame["units"]:
            want = [
                b.symbol for s, b in legend.BADGES.items() if a[f"state.units.{s}"][t, u["slot"]]
            ]
            assert u["badges"] == "".join(want)
            assert u["shield"] == bool(a["state.units.shield"][t, u["slot"]])
    moved = got["frames"][0]["units"][0]["x"] != got["frames"][-1]["units"][0]["x"]
    assert moved or got["frames"][0]["units"][0]["y"] != got["frames"][-1]["units"][0]["y"]


def test_pages_send_strict_headers_and_static_files(web_site: str) -> None:
    r = _get(web_site + "/")
    assert "default-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert _get(web_site + "/static/style.css").status_code == 200
    assert _get(web_site + "/docs").status_code == 404  # no pages that load outside scripts


def test_submissions_are_closed_without_checker_and_runner(web_site: str) -> None:
    r = httpx.post(web_site + "/api/submissions", files={"file": ("a.bin", b"x")},
                   data={"team": "T"}, timeout=30)  # fmt: skip
    assert r.status_code == 503
    assert "submissions closed" in r.json()["error"]
    assert _get(web_site + "/api/submissions/" + "0" * 32).status_code == 503


def test_records_read_a_real_results_file(web_recorded: Path) -> None:
    got = tables.records(web_recorded / "games.csv")
    assert set(got) == {"random", "idle"}
    (vs_idle,) = got["random"]
    assert vs_idle["opponent"] == "idle"
    assert vs_idle["games"] == 2


def test_the_replay_key_is_the_seasons_modes(web_season_dir: Path, tmp_path: Path, serve) -> None:
    """The key and its colours follow the season's mode, never Team Deathmatch's by default: a
    Two-Bridge season's replay page shows Two-Bridge's key (`marl_bgs_eval.two_bridge.legend`,
    as the clients' pictures do; the canvas's colours: test_web_replay_modes)."""
    import shutil

    from marl_bgs_tournament.web import create_app

    folder = shutil.copytree(web_season_dir, tmp_path / "bridge")
    season = json.loads((folder / "season.json").read_text())
    (folder / "season.json").write_text(json.dumps({**season, "mode": "two-bridge-v1"}))
    game = json.loads((folder / "replays.json").read_text())[0]["game"]
    tdm_lines = {f"</span> {e['meaning']}</li>" for e in replay_key.entries()}
    bridge_lines = {f"</span> {e.meaning}</li>" for g in bridge_key.GROUPS
                    for e in bridge_legend.GROUPS[g]}  # fmt: skip
    assert "</span> enemy Marines (built in)</li>" in bridge_lines
    with serve(create_app(folder)) as url:
        assert _get(url + "/key.css").text == bridge_key.css()
        shown = html.unescape(_get(f"{url}/replays/{game}").text)
        assert {line for line in bridge_lines | tdm_lines if line in shown} == bridge_lines
    with serve(create_app(web_season_dir)) as url:
        assert _get(url + "/key.css").text == replay_key.css() != bridge_key.css()
        assert "sample key-" in _get(f"{url}/replays/{game}").text


def test_the_teamwork_screen_page_shows_the_study(web_site: str, web_season_dir: Path) -> None:
    rows = _rows(web_season_dir / "studies" / "teamwork.csv")
    assert any(r["varies"] for r in rows)
    r = _get(web_site + "/studies/teamwork")
    assert r.status_code == 200
    body = r.text
    assert '<a href="/studies/teamwork">Teamwork</a>' in body
    for row in rows:
        assert f"<td>{html.escape(row['measure'])}</td>" in body
        if row["varies"]:
            assert f'<td class="num">{row["rho"]:.4g}</td>' in body
    chart = _get(web_site + "/studies/teamwork.png")
    assert chart.status_code == 200
    assert chart.headers["content-type"] == "image/png"
    assert chart.content == (web_season_dir / "studies" / "teamwork.png").read_bytes()
    api = _get(web_site + "/api/studies/teamwork").json()
    assert [a["measure"] for a in api] == [row["measure"] for row in rows]
    for a, row in zip(api, rows, strict=True):
        for k in ("rho", "p", "p_holm", "p_maxt"):
            want = row[k]
            assert (a[k] is None) if math.isnan(want) else a[k] == pytest.approx(want), k


def test_the_zero_shot_page_shows_the_study(web_site: str, web_season_dir: Path) -> None:
    rows = _rows(web_season_dir / "studies" / "zero_shot.csv")
    r = _get(web_site + "/studies/zero-shot")
    assert r.status_code == 200
    body = r.text
    assert '<a href="/studies/zero-shot">Zero-shot</a>' in body
    assert body.count("<td>alpha</td>") == len(rows) == 4
    assert '<td class="num">-2.5</td>' in body  # bravo as the Mage: its margin change
    assert '<td class="num">-4 to -1</td>' in body  # and its interval
    assert '<td class="num">1210</td>' in body or '<td class="num">1210.5</td>' in body
    chart = _get(web_site + "/studies/zero-shot.png")
    assert chart.status_code == 200
    assert chart.content == (web_season_dir / "studies" / "zero_shot.png").read_bytes()
    api = _get(web_site + "/api/studies/zero-shot").json()
    assert [(a["stranger"], a["class"]) for a in api] == [
        ("bravo", "M"),
        ("bravo", "P"),
        ("random", "M"),
        ("random", "P"),
    ]
    assert api[2]["stranger_elo"] is None
    assert api[0]["margin_change"] == -2.5


def test_a_season_without_the_study_or_with_a_bad_one_says_so(
    web_season_dir: Path, tmp_path: Path, serve: Any
) -> None:
    from marl_bgs_tournament.web import create_app

    folder = tmp_path / "season"
    import shutil

    shutil.copytree(web_season_dir, folder)
    shutil.rmtree(folder / "studies")
    with serve(create_app(folder)) as url:
        r = _get(url + "/studies/teamwork")
        assert r.status_code == 200
        assert 'id="not-run"' in r.text
        assert "marl-bgs-tournament teamwork FOLDER" in r.text
        assert "marl-bgs-tournament zero-shot FOLDER" in _get(url + "/studies/zero-shot").text
        assert _get(url + "/api/studies/teamwork").json() is None
        assert _get(url + "/studies/teamwork.png").status_code == 503
        (folder / "studies").mkdir()
        (folder / "studies" / "teamwork.csv").write_text(
            "measure,rho,p,p_holm,p_maxt,systems,varies,exact\nspread,1.7,0.1,0.2,0.2,4,true,true\n"
        )
        (folder / "studies" / "teamwork.png").write_bytes(b"GIF89a not a png")
        bad = _get(url + "/studies/teamwork")
        assert bad.status_code == 503
        assert "teamwork.csv: row 1, column rho" in html.unescape(bad.text)
        assert _get(url + "/studies/teamwork.png").status_code == 503
        assert 'id="not-run"' in _get(url + "/studies/zero-shot").text
        assert _get(url + "/api/studies/zero-shot").json() is None
        (folder / "studies" / "zero_shot.csv").write_text(
            "base,stranger,stranger_elo,class,games,margin_change,low,high,distance,"
            "base_distance,distance_added\nalpha,bravo,1200,M,-3,1,0,2,1,1,0\n"
        )
        bad = _get(url + "/studies/zero-shot")
        assert bad.status_code == 503
        assert "zero_shot.csv: row 1, column games" in html.unescape(bad.text)
