"""Maps by content (custom files, split names), games handed over as they end, resumed runs,
and a progress bar that moves with the ticks played."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

import marl_bgs
import marl_bgs_eval as ev

SHIPPED = Path(marl_bgs.__file__).parent / "tdm" / "maps" / "data"


def _custom(path: Path, map_id: int, split: str = "custom", obstacles=None) -> Path:
    raw = json.loads((SHIPPED / "00_open_arena.json").read_text())
    pillar = {"kind": "pillar", "x": 10.0, "y": 2.0, "radius": 1.0}
    raw.update(id=map_id, split=split, name=f"Mine {map_id}", obstacles=obstacles or [pillar])
    path.write_text(json.dumps(raw))
    return path


def test_split_names_and_mixed_references_resolve_in_order(tmp_path) -> None:
    specs = ev.resolve_maps(["test", "validation"])
    assert [s.id for s in specs] == [*range(47, 52), *range(42, 47)]
    mine = _custom(tmp_path / "mine.json", 3)
    mixed = ev.resolve_maps([0, "Picket Line", mine])
    assert [s.name for s in mixed] == ["Open Arena", "Picket Line", "Mine 3"]
    with pytest.raises(ev.EvalError, match=r"maps: \['Open Arena'\] listed more than once"):
        ev.resolve_maps([0, "open arena"])
    with pytest.raises(ev.EvalError, match=r"maps: \['Mine 3'\] are not in split 'test'"):
        ev.resolve_maps([47, str(mine)], split="test")
    with pytest.raises(ev.EvalError, match=r"maps: .*looks like a path"):
        ev.resolve_maps(["maps/mine.txt"])


def test_a_custom_map_with_a_shipped_id_plays_its_own_obstacles(base_games, kit, tmp_path):
    """A custom file whose id is 0 is not the Open Arena: other hash, other games, map -1."""
    mine = _custom(tmp_path / "mine.json", 0)
    games = ev.evaluate(kit.mixed, "random", batch_size=8, **{**kit.settings, "maps": [str(mine)]})
    assert set(games["map"]) == {marl_bgs.maps.CUSTOM_MAP_ID}
    assert set(games["map_name"]) == {"Mine 0"}
    assert set(games["map_hash"]) == {marl_bgs.maps.load_file(mine).content_hash}
    arena = base_games[base_games["map"] == 0]
    assert set(games["map_hash"]).isdisjoint(arena["map_hash"])
    assert not games["ticks"].equals(arena["ticks"].reset_index(drop=True)) or not games[
        "a_damage_dealt"
    ].equals(arena["a_damage_dealt"].reset_index(drop=True))
    # A file that claims a shipped split and id with other obstacles is refused, not replaced.
    fake = _custom(tmp_path / "fake.json", 47, split="test", obstacles=[])
    with pytest.raises(ev.EvalError, match=r"maps: fake.json.id: 47 is shipped map"):
        ev.evaluate(kit.mixed, "random", **{**kit.settings, "maps": [str(fake)]})


def test_cross_play_takes_custom_maps(kit, tmp_path) -> None:
    mine = _custom(tmp_path / "mine.json", 7)
    matrix, games = ev.cross_play(
        [kit.mixed, "random"], include_self=False, batch_size=8,
        **{**kit.settings, "maps": [str(mine)], "games_per_map": 2},
    )  # fmt: skip
    assert set(games["map_name"]) == {"Mine 7"}
    assert len(games) == 4
    assert matrix.shape == (2, 2)


def test_resume_plays_only_the_missing_games(base_games: pd.DataFrame, kit) -> None:
    handed: list[pd.DataFrame] = []
    done = base_games.iloc[[0, 1, 5, 9]]
    games = ev.evaluate(
        kit.mixed, "random", batch_size=8, resume=done, on_games=handed.append, **kit.settings
    )
    pd.testing.assert_frame_equal(games, base_games)
    played = pd.concat(handed)
    assert sorted(played["game"]) == sorted(set(range(16)) - {0, 1, 5, 9})
    stranger = done.assign(seed=99)
    with pytest.raises(ev.EvalError, match="resume: game 0 is not a game of this evaluation"):
        ev.evaluate(kit.mixed, "random", batch_size=8, resume=stranger, **kit.settings)


def test_progress_moves_before_any_game_ends(base_games, kit, monkeypatch) -> None:
    seen: list[tuple[float, int]] = []

    @contextlib.contextmanager
    def recorder(enabled, total, label):
        assert enabled
        assert total == 16
        yield lambda done, finished: seen.append((done, finished))

    monkeypatch.setattr(sys.modules["marl_bgs_eval.evaluate"], "progress_bar", recorder)
    handed: list[pd.DataFrame] = []
    games = ev.evaluate(
        kit.mixed, "random", batch_size=8, chunk_ticks=4, progress=True, on_games=handed.append,
        **kit.settings,
    )  # fmt: skip
    pd.testing.assert_frame_equal(games, base_games)
    first_done, first_finished = seen[0]
    assert first_finished == 0
    assert first_done > 0  # moved though no game has ended yet
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1] == (16, 16)
    assert len(handed) >= 2  # games arrive in several batches, as they end
    arrived = pd.concat(handed).sort_values("game", ignore_index=True)
    pd.testing.assert_frame_equal(ev.results.normalize(arrived), base_games)
