"""Full metrics: exact totals on a hand-built game, invariants on played games, the schema.

The hand-built game is written from the rules (paper Table S3): a Mage under its own aura hits a
Warrior under its own aura for 13 x 1.15 x 0.85 per Basic; a Hunter traps it, the Mage's next
hit breaks the Trap, and the Mage and Hunter kill it with the Priest's heal on the Mage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import marl_bgs_eval as ev
from marl_bgs import UnitSpec, author_state
from marl_bgs.tdm.actions import action_masks
from marl_bgs.tdm.perception import perceive
from marl_bgs.tdm.testing import slot_actions
from marl_bgs.tdm.transition import transition
from marl_bgs_eval import metrics as mt
from marl_bgs_eval.metrics import timing

U = UnitSpec
ROOT = Path(__file__).resolve().parents[3]
MAGE, HUNTER, PRIEST, WARRIOR = 0, 2, 4, 6  # slots a0, a2, a4, b1


@jax.jit
def _tick(state: Any, actions: jnp.ndarray, memory: timing.Memory) -> tuple:
    mask = action_masks(state, perceive(state)).pair
    nxt, facts = transition(state, actions)
    batch = lambda x: jax.tree.map(lambda a: a[None], x)  # noqa: E731
    counts, memory = mt.tally("full", batch(state), batch(facts), mask[None], memory)
    return nxt, counts[0], memory


def _play(state: Any, script: list[jnp.ndarray]) -> pd.Series:
    total, memory = np.zeros(mt.width("full")), mt.fresh_memory(1)
    for actions in script:
        state, counts, memory = _tick(state, actions, memory)
        total += np.asarray(counts, np.float64)
    return pd.Series(total, index=mt.columns("full"))


@pytest.fixture(scope="module")
def duel() -> pd.Series:
    state = author_state(
        units=[
            U(slot=MAGE, cls="M", x=5.0, y=5.0, health=70.0),
            U(slot=HUNTER, cls="H", x=6.0, y=7.3),
            U(slot=PRIEST, cls="P", x=4.0, y=4.0),
            U(slot=WARRIOR, cls="W", x=7.5, y=5.0, health=60.0),
        ]
    )
    script = [
        slot_actions(basic={MAGE: WARRIOR, PRIEST: MAGE}),  # Priest: 8 useful
        slot_actions(basic={MAGE: WARRIOR}, ult={HUNTER: WARRIOR}),  # Trap; same-tick hit
        slot_actions(basic={MAGE: WARRIOR}),  # breaks the Trap
        slot_actions(basic={MAGE: WARRIOR, HUNTER: WARRIOR, PRIEST: MAGE}),  # kill; 2 useful
    ]
    return _play(state, script)


MAGE_HIT = 13 * 1.15 * 0.85


def test_damage_auras_and_healing_of_a_hand_built_game(duel: pd.Series) -> None:
    expect = {
        "damage_done.a0>b1.basic": 4 * MAGE_HIT,
        "damage_done.a2>b1.ultimate": 10 * 0.85,
        "damage_done.a2>b1.basic": 6 * 0.85,
        "damage_received.b1.basic": 4 * MAGE_HIT + 6 * 0.85,
        "damage_received.b1.ultimate": 10 * 0.85,
        "damage_to_affected.a0>b1.trapped": MAGE_HIT,  # tick 2 only: the Trap held then
        "mage_aura_added.a0>a0": 4 * 13 * 0.15 * 0.85,
        "warrior_aura_prevented.b1>b1": 4 * 13 * 1.15 * 0.15 + (10 + 6) * 0.15,
        "aura_totals.a.added": 4 * 13 * 0.15 * 0.85,
        "aura_totals.b.prevented": 4 * 13 * 1.15 * 0.15 + (10 + 6) * 0.15,
        "healing_done.a4>a0.basic": 8 + 2,
        "excess_healing.a4>a0.basic": 6,
        "healing_received.a0.basic": 10,
        "a_damage_dealt": 4 * MAGE_HIT + 16 * 0.85,
        "a_healing_done": 10,
        "a_excess_healing": 6,
        "teammate_distance.a0>a2": 4 * np.hypot(1.0, 2.3),  # nobody moves
        "teammate_distance.a0>a4": 4 * np.hypot(1.0, 1.0),
        "teammate_distance.a2>a4": 4 * np.hypot(2.0, 3.3),
        "nearest_teammate.a0": 4 * np.hypot(1.0, 1.0),
        "nearest_teammate.a2": 4 * np.hypot(1.0, 2.3),
        "nearest_teammate.a4": 4 * np.hypot(1.0, 1.0),
        "regeneration.a2": 100 * 0.04,  # out of combat on tick 0 only (before the cap)
    }
    for col, value in expect.items():
        assert duel[col] == pytest.approx(value, abs=1e-4), col
    assert set(expect) == {c for c in duel.index[duel != 0] if mt.is_amount(c)}


def test_counts_of_a_hand_built_game(duel: pd.Series) -> None:
    expect = {
        "basics_on_enemies.a0>b1": 4,
        "basics_on_enemies.a2>b1": 1,
        "basics_on_allies.a4>a0": 2,
        "ultimates_on_enemies.a2>b1": 1,
        "freedom_given.a4>a0": 2,
        "applied.a2>b1.trap": 1,
        "trap_broken_by.a0>b1": 1,
        "status_ticks.b1.trap": 1,
        "aura_cover.a0>a0": 4,
        "aura_cover.a0>a4": 4,
        "aura_cover.b1>b1": 4,
        "aura_stack.a0.mage.one": 4,
        "aura_stack.b1.warrior.one": 4,
        "coordination.a.two_or_more_attackers": 2,
        "coordination.a.focus_fire": 2,
        "kill_hits.a0>b1": 1,
        "kill_hits.a2>b1": 1,
        "kill_heals.a4>b1": 1,
        "kill_helpers.a.3": 1,
        "kill_setups.a.two_or_more_helpers": 1,
        "deaths.b1": 1,
        "results.a.points": 1,
        "results.a.kills": 1,
        "results.b.deaths": 1,
        "results.a.ticks_ahead": 1,
        "alive_ticks.a0": 4,
        "teammate_ticks.a0>a2": 4,
        "moves.a0.stay": 4,
        "a_kills": 1,
        "b_deaths": 1,
        "a_basics_used": 7,
        "a_ultimates_used": 1,
        "applied.a2>b1.slow_hunter": 1,  # the Hunter's killing Basic
        "status_ticks.a0.freedom": 1,  # from tick 0's heal (tick 3's came as the game ended)
        "aura_stack.a4.mage.one": 4,  # the Priest stands in the Mage's aura
        "red_zone.a0.ticks": 4,  # x <= 5: inside team A's Red Zone
        "red_zone.a4.ticks": 4,
        **{f"alive_ticks.{s}": 4 for s in ("a2", "a4", "b1")},
        **{f"teammate_ticks.{p}": 4 for p in ("a0>a4", "a2>a4")},
        **{f"moves.{s}.stay": 4 for s in ("a2", "a4", "b1")},
    }
    for col, value in expect.items():
        assert duel[col] == value, col
    amounts = {c for c in duel.index if mt.is_amount(c)}
    counted = set(duel.index[duel != 0]) - amounts
    assert counted == set(expect)  # every other count stayed 0 (no Trap at the kill, ...)


def test_ultimates_together_counts_each_once_within_four_ticks() -> None:
    used = np.zeros((12, 10), bool)
    used[0, 0] = used[4, 1] = True  # 4 apart: both count
    used[2, 5] = used[7, 6] = True  # 5 apart: neither
    used[9, 2] = used[9, 3] = used[10, 4] = True  # three together
    memory, total = timing.fresh(1), np.zeros(10)
    for t in range(12):
        got, memory = timing.together(jnp.asarray(used[t][None]), jnp.asarray([t]), memory)
        total += np.asarray(got[0])
    assert total.tolist() == [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]


# --- played games -------------------------------------------------------------------------------

PLAYED = {"maps": [0], "games_per_map": 4, "seed": 5, "tick_limit": 60, "winning_score": 8}


@pytest.fixture(scope="module")
def played(rush: ev.System) -> dict[str, pd.DataFrame]:
    return {
        level: ev.evaluate(rush, rush, metrics=level, batch_size=4, **PLAYED)
        for level in ("full", "none")
    }


@pytest.fixture(scope="module")
def rush() -> ev.System:
    return ev.get_system("eastward")


def _sum(df: pd.DataFrame, prefix: str) -> np.ndarray:
    return df[[c for c in df.columns if c.startswith(prefix)]].sum(axis=1).to_numpy()


def test_the_metric_level_never_changes_a_game(played: dict[str, pd.DataFrame]) -> None:
    full, none = played["full"], played["none"]
    assert list(none.columns) == [c for c in full.columns if c in none.columns]
    pd.testing.assert_frame_equal(full[none.columns], none)
    assert len(full.columns) - len(none.columns) == len(mt.columns("full")) - 6


def test_full_metrics_add_up_on_played_games(played: dict[str, pd.DataFrame]) -> None:
    g = played["full"]
    assert g["a_damage_dealt"].sum() > 100  # the games had fights
    assert g["b_kills"].sum() > 0
    for t, o in (("a", "b"), ("b", "a")):
        done = _sum(g, f"damage_done.{t}")
        assert done == pytest.approx(_sum(g, f"damage_received.{o}"), rel=1e-5)
        assert done == pytest.approx(g[f"{t}_damage_dealt"], rel=1e-5)
        assert _sum(g, f"healing_done.{t}") == pytest.approx(g[f"{t}_healing_done"], abs=1e-3)
        assert _sum(g, f"excess_healing.{t}") == pytest.approx(g[f"{t}_excess_healing"], abs=1e-3)
        kills = g[f"{t}_kills"].to_numpy()
        np.testing.assert_array_equal(kills, g[f"{o}_deaths"])
        np.testing.assert_array_equal(kills, _sum(g, f"deaths.{o}"))
        np.testing.assert_array_equal(kills, _sum(g, f"kill_helpers.{t}"))
        np.testing.assert_array_equal(kills, g[f"results.{t}.kills"])
        np.testing.assert_array_equal(g[f"points_{t}"], g[f"results.{t}.points"])
        assert (_sum(g, f"kill_hits.{t}") >= kills).all()
        red = g[[f"red_zone.{t}{i}.deaths" for i in range(5)]].sum(axis=1)
        np.testing.assert_array_equal(red, g[f"{t}_red_zone_deaths"])
        basics = _sum(g, f"basics_on_enemies.{t}") + _sum(g, f"basics_on_allies.{t}")
        np.testing.assert_array_equal(basics, g[f"{t}_basics_used"])
        ults = _sum(g, f"ultimates_on_enemies.{t}") + _sum(g, f"ultimates_on_allies.{t}")
        ults += _sum(g, f"ultimates_untargeted.{t}")
        np.testing.assert_array_equal(ults, g[f"{t}_ultimates_used"])
        assert (_sum(g, f"ultimates_together.{t}") <= g[f"{t}_ultimates_used"]).all()
        added = g[f"aura_totals.{t}.added"].to_numpy()
        assert added == pytest.approx(_sum(g, f"mage_aura_added.{t}"), abs=1e-3)
        rejected = _sum(g, f"rejected.{t}")
        assert (rejected >= g[f"{t}_rejected_actions"]).all()
        for i in range(5):
            slot = f"{t}{i}"
            lived = g[f"alive_ticks.{slot}"].to_numpy()
            np.testing.assert_array_equal(lived + g[f"dead_ticks.{slot}"], g["ticks"])
            np.testing.assert_array_equal(_sum(g, f"moves.{slot}."), lived)


def test_schema_lists_every_column_once_in_28_topics() -> None:
    s = mt.schema()
    assert s["column"].is_unique
    assert list(s["column"]) == mt.columns("full")
    assert len(s) > 2000
    assert s["topic"].nunique() == 28
    assert set(s["section"]) == set(mt.SECTIONS)
    assert 0.75 < s["who"].mean() < 0.9  # most columns say who did what to whom
    assert set(s["unit"]) == {"HP", "map units", "ticks", "count"}
    heal = mt.find("heal")
    assert len(heal) > 300
    assert heal.apply(lambda r: "heal" in " ".join(r[["column", "topic", "meaning"]]).lower(),
                      axis=1).all()  # fmt: skip
    with pytest.raises(ev.EvalError, match="find: expected some text"):
        mt.find(" ")


def test_docs_metrics_md_is_generated_from_the_code() -> None:
    doc = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert doc == mt.markdown(), "run: marl-bgs-eval metrics --doc docs/metrics.md"


def test_full_tables_round_trip_through_files_and_refuse_a_missing_column(
    played: dict[str, pd.DataFrame], tmp_path: Path
) -> None:
    g = played["full"]
    for name in ("g.parquet", "g.csv"):
        back = ev.load(ev.save(g, tmp_path / name))
        pd.testing.assert_frame_equal(back, g)
    with pytest.raises(ev.EvalError, match=r"'burst.a0.pressed'\] missing: .* of level 'full'"):
        ev.validate(g.drop(columns=["burst.a0.pressed"]))


def test_system_metrics_on_played_games(played: dict[str, pd.DataFrame]) -> None:
    g = played["full"]
    table = ev.system_metrics(g, bootstrap=200, seed=1).set_index("measure")
    assert set(table["system"]) == {"eastward"}
    row = table.loc["ticks_with_two_or_more_attackers"]
    both = g["coordination.a.two_or_more_attackers"] + g["coordination.b.two_or_more_attackers"]
    assert row["value"] == pytest.approx(100 * both.sum() / (2 * g["ticks"].sum()))
    assert row["low"] <= row["value"] <= row["high"]
    assert row["games"] == len(g)


def test_cli_writes_full_results_and_replays_to_a_folder(
    played: dict[str, pd.DataFrame], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from marl_bgs_eval import replays
    from marl_bgs_eval.cli import app

    settings = ["--maps", "0", "--games-per-map", "4", "--seed", "5", "--tick-limit", "60"]
    settings += ["--winning-score", "8", "--batch-size", "4", "--no-progress"]
    out = tmp_path / "run"
    args = ["play", "eastward", "eastward", *settings, "--metrics", "full", "--replays", "2"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(ev.load(out / "results.parquet"), played["full"])
    files = sorted((out / "replays").iterdir())
    assert [f.name for f in files] == ["game-0.replay.zip", "game-1.replay.zip"]
    for f, (_, row) in zip(files, played["full"].head(2).iterrows(), strict=True):
        r = replays.load(f)
        assert (r.header["points_a"], r.header["ticks"]) == (row["points_a"], row["ticks"])
    missing = CliRunner().invoke(app, [*args])
    assert missing.exit_code == 2
    assert "replays: needs --out" in missing.output
