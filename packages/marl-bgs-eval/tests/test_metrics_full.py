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
from marl_bgs_eval.tdm import metrics as mt
from marl_bgs_eval.tdm.metrics import timing

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


def _game(*units: UnitSpec, **kw: Any) -> Any:
    return author_state(units=list(units), **kw)


BURST_HIT = 13 * 1.15 * 1.5  # under its own aura, boosted by Burst


@pytest.fixture(scope="module")
def scenes() -> dict[str, pd.Series]:
    """Four more hand-built games, one per group of families (Burst, Charge, Poison, a save)."""
    a0, a1, a2, a3, a4, b0, b1, b2, b3, b4 = range(10)
    return {
        "burst": _play(
            _game(U(slot=a0, cls="M", x=5.0, y=5.0), U(slot=a2, cls="H", x=5.5, y=7.6),
                  U(slot=b0, cls="H", x=7.0, y=5.0, health=40.0)),
            [slot_actions(ult={a0: None}),  # Burst; the Hunter is in Basic reach
             slot_actions(basic={a0: b0, a2: b0}),  # the Hunter's Basic slows it
             slot_actions(basic={a0: b0})],  # killed while slowed
        ),
        "charge": _play(
            _game(U(slot=a1, cls="W", x=10.0, y=5.0),
                  U(slot=b2, cls="R", x=15.5, y=5.0, health=20.0), wave=(4, 1)),
            [slot_actions(ult={a1: b2}), slot_actions(), slot_actions()],  # B's wave: tick 1
        ),
        "poison": _play(
            _game(U(slot=a3, cls="R", x=5.0, y=5.0), U(slot=b1, cls="W", x=6.2, y=5.0),
                  U(slot=b4, cls="P", x=8.0, y=5.0)),
            [slot_actions(ult={a3: b1}), slot_actions(basic={b4: b1}), slot_actions()],
        ),
        "save": _play(
            _game(U(slot=a2, cls="H", x=5.0, y=5.0, health=5.0), U(slot=a4, cls="P", x=5.0, y=7.0),
                  U(slot=b3, cls="R", x=6.0, y=5.0), U(slot=a0, cls="M", x=2.0, y=9.0)),
            [slot_actions(basic={b3: a2, a0: b3}, ult={a4: a2})],  # a0's target is out of reach
        ),
    }  # fmt: skip


EXACT = {
    "burst": {
        "burst.a0.pressed": 1, "burst.a0.enemy_in_reach": 1, "burst.a0.held_ticks": 2,
        "ultimates_untargeted.a0": 1, "status_ticks.a0.burst": 2,
        "burst_damage.a0>b0": 2 * BURST_HIT, "damage_done.a0>b0.basic": 2 * BURST_HIT,
        "damage_done.a2>b0.basic": 6, "damage_to_affected.a0>b0.slowed_hunter": BURST_HIT,
        "applied.a2>b0.slow_hunter": 1, "status_ticks.b0.slow_hunter": 1,
        "kills_of_affected.a0>b0.slowed_hunter": 1, "kill_setups.a.hunter_slowed": 1,
        "kill_helpers.a.1": 1, "kill_hits.a0>b0": 1, "coordination.a.two_or_more_attackers": 1,
        "coordination.a.focus_fire": 1,
    },
    "charge": {
        "ultimates_on_enemies.a1>b2": 1, "damage_done.a1>b2.ultimate": 20,
        "charge_distance.a1": 5.5 - 1.0,  # to contact (two body radii) with the Rogue
        "applied.a1>b2.stun": 1, "applied.a1>b2.slow_charge": 1,
        "kill_hits.a1>b2": 1, "kill_setups.a.warrior_ultimate": 1, "kill_helpers.a.1": 1,
        "red_zone.b2.deaths": 1, "red_zone.b2.ticks": 2, "red_zone_kill_hits.a1>b2": 1,
        "results.a.points": 2, "deaths.b2": 1, "dead_ticks.b2": 1, "alive_ticks.b2": 2,
        "respawns.b": 1, "status_ticks.b2.shield": 1,
    },
    "poison": {
        "damage_done.a3>b1.ultimate": 36 * 0.85, "warrior_aura_prevented.b1>b1": 36 * 0.15,
        "applied.a3>b1.stun": 1, "applied.a3>b1.poison": 1,
        "healing_done.b4>b1.basic": 4, "antiheal_healing.b1": 4,  # 8 halved by Poison
        "healing_to_affected.b4>b1.stunned": 4, "healing_to_affected.b4>b1.slowed_poison": 4,
        "healing_to_affected.b4>b1.antiheal": 4, "freedom_given.b4>b1": 1,
        "freedom_on_slowed.b4>b1": 1, "freed_slow_ticks.b1": 1, "status_ticks.b1.stun": 1,
        "status_ticks.b1.slow_poison": 2, "status_ticks.b1.antiheal": 2,
    },
    "save": {
        "damage_done.b3>a2.basic": 12, "ultimates_on_allies.a4>a2": 1,
        "healing_done.a4>a2.ultimate": 107, "excess_healing.a4>a2.ultimate": 93,  # 5 - 12 + 200
        "healing_saves.a4>a2": 1, "salvation_saves.a4": 1, "rejected.a0.combat": 1,
    },
}  # fmt: skip


@pytest.mark.parametrize("scene", sorted(EXACT))
def test_hand_built_scenes(scenes: dict[str, pd.Series], scene: str) -> None:
    got = scenes[scene]
    for col, value in EXACT[scene].items():
        assert got[col] == pytest.approx(value, abs=1e-4), col


def test_every_family_is_checked_on_a_hand_built_game(
    duel: pd.Series, scenes: dict[str, pd.Series]
) -> None:
    """Every family has an exactly known nonzero column in some hand-built game, except two
    checked elsewhere: Ultimates together (its own test) and shields ending on a body."""
    checked = {c for table in EXACT.values() for c in table}
    checked |= {c for c in duel.index if duel[c] != 0}
    families = {c.split(".")[0] for c in checked if "." in c}
    assert {f.name for f in mt.FAMILIES} - families == {"ultimates_together", "shield_cleared"}


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
        level: ev.evaluate(rush, rush, metrics=level, batch_size=4, **PLAYED) for level in mt.LEVELS
    }


@pytest.fixture(scope="module")
def rush() -> ev.System:
    return ev.get_system("eastward")


def _sum(df: pd.DataFrame, prefix: str) -> np.ndarray:
    return df[[c for c in df.columns if c.startswith(prefix)]].sum(axis=1).to_numpy()


def test_the_metric_level_never_changes_a_game(played: dict[str, pd.DataFrame]) -> None:
    full = played["full"]
    for level in ("none", "priority"):
        other = played[level]
        assert list(other.columns) == [c for c in full.columns if c in other.columns]
        pd.testing.assert_frame_equal(full[other.columns], other)
        assert len(full.columns) - len(other.columns) == mt.width("full") - mt.width(level)


def test_a_total_that_always_equals_another_measure_is_screened_once(
    played: dict[str, pd.DataFrame], duel: pd.Series, scenes: dict[str, pd.Series]
) -> None:
    """Each of `TWINS` equals the measure it names, numerator and denominator, for both teams in
    the played games and in the hand-built ones (a wrong pairing fails here; each is nonzero
    somewhere), and only the measure it names stays in the screen's list and among the names
    `system_metrics` takes."""
    from marl_bgs_eval.tdm.metrics.analysis import MEASURES
    from marl_bgs_eval.tdm.metrics.team import FAMILY_TOTALS, TEAM_MEASURES, TWINS

    built = pd.DataFrame([duel, *scenes.values()]).assign(ticks=4.0)
    seen = set()
    for name, twin in TWINS.items():
        kept = {**MEASURES, **TEAM_MEASURES}[twin]
        for table in (played["full"], built):
            for side in ("a", "b"):
                mine, theirs = FAMILY_TOTALS[name](table, side), kept(table, side)
                for x, y in zip(mine, theirs, strict=True):
                    np.testing.assert_allclose(x, y, rtol=1e-5, err_msg=f"{name} {side}")
                seen |= {name} if mine[0].abs().sum() > 0 else set()
        assert name not in TEAM_MEASURES
    assert seen == set(TWINS)
    assert len(TEAM_MEASURES) == len(FAMILY_TOTALS) - len(TWINS)
    with pytest.raises(ev.EvalError, match=r"unknown 'team.results.kills'"):
        ev.system_metrics(played["full"], ["team.results.kills"], bootstrap=20)


def test_team_measures_split_every_family_between_the_two_teams(
    played: dict[str, pd.DataFrame],
) -> None:
    """With every metric column set to 1, a team measure counts the columns it sums: over both
    sides, a family's measures count each of its columns exactly once."""
    from marl_bgs_eval.tdm.metrics.families import FAMILIES, columns
    from marl_bgs_eval.tdm.metrics.team import FAMILY_TOTALS, WHOSE

    ones = played["full"].head(1).copy()
    for f in FAMILIES:
        ones[columns(f)] = 1.0
    counted = {f.name: 0.0 for f in FAMILIES if f.axes[0].name in WHOSE}
    for name, m in FAMILY_TOTALS.items():
        for side in ("a", "b"):
            num, den = m(ones, side)
            counted[name.split(".")[1]] += float(num.iloc[0])
            assert float(den.iloc[0]) == float(ones["ticks"].iloc[0]) / 100.0
    assert counted == {f.name: float(len(columns(f))) for f in FAMILIES if f.name in counted}
    assert len(counted) == len(FAMILIES)  # every family has a whose-axis


def test_team_measures_agree_with_the_results_columns(played: dict[str, pd.DataFrame]) -> None:
    from marl_bgs_eval.tdm.metrics.team import FAMILY_TOTALS

    g = played["full"]
    for side in ("a", "b"):
        dealt = sum(
            FAMILY_TOTALS[f"team.damage_done.{k}"](g, side)[0] for k in ("basic", "ultimate")
        )
        np.testing.assert_allclose(dealt, g[f"{side}_damage_dealt"], rtol=1e-5)
        np.testing.assert_array_equal(FAMILY_TOTALS["team.deaths"](g, side)[0], g[f"{side}_deaths"])
        np.testing.assert_array_equal(
            FAMILY_TOTALS["team.results.kills"](g, side)[0], g[f"{side}_kills"]
        )
    pooled = ev.system_metrics(g, ["kills_per_100_ticks", "team.damage_done.basic"], bootstrap=20)
    assert pooled["value"].iloc[1] > 0
    with pytest.raises(ev.EvalError, match=r"unknown 'team.nope'.* or one of the mode's \d+ team"):
        ev.system_metrics(g, ["team.nope"], bootstrap=20)
    from marl_bgs_eval.compare import _names
    from marl_bgs_eval.measures import GENERIC

    with pytest.raises(ev.EvalError, match=r"unknown 'nope'; expected one of \['win_rate'"):
        _names(["nope"], dict(GENERIC), {})  # a mode without team measures


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

    from marl_bgs_eval.cli import app
    from marl_bgs_eval.tdm import replays

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
