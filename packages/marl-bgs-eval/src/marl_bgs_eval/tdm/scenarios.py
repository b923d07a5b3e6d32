"""Scenario evaluation: a System plays team A in every endgame scenario, against each scenario's
controller, and its wins are compared with random play's by a two-sided Fisher exact test.

    table = ev.evaluate_scenarios(my_system, n_games=256, seed=20261006)

Games come in pairs that share a seed number: the snapshot as designed and its mirror image
(team A on the right), which every agent sees identically in its own frame, so a pair whose two
games agree is one game of evidence: wins and the test count distinct games (`distinct`: a game
whose trajectory repeats another's, a mirror image's or a deterministic replay's, once).
Scenario results never feed Elo.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact

from marl_bgs import ConfigError
from marl_bgs.tdm import scenarios as engine_scenarios
from marl_bgs_eval.distinct import repeated
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.evaluate import as_system, play_schedule, schedule
from marl_bgs_eval.modes import Layout
from marl_bgs_eval.results import normalize
from marl_bgs_eval.systems import System, random_system
from marl_bgs_eval.tdm import PARTS
from marl_bgs_eval.tdm import metrics as mt
from marl_bgs_eval.tdm.scripted import scripted_system

SCRIPTED_TEAMS = ("tdm-alpha", "tdm-beta", "tdm-gamma")
SUMMARY_COLUMNS = (
    "scenario", "challenge", "opponent", "system", "games", "wins", "draws", "losses",
    "win_rate", "distinct", "distinct_wins", "reference", "reference_distinct",
    "reference_distinct_wins", "p_value",
)  # fmt: skip


def scenario_games(
    system: System | str, scenario: Any, *, n_games: int = 256, seed: int = 0,
    batch_size: int = 128, metrics: str = "none", progress: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """One results row per game of `system` as team A in `scenario` (an id, name, file or
    `Scenario`), its controller as team B; the results columns plus `scenario`."""
    a = as_system(system, "system")
    if isinstance(n_games, bool) or not isinstance(n_games, int) or n_games < 2 or n_games % 2:
        raise EvalError(f"n_games: expected an even integer >= 2, got {n_games!r}")
    _check_seed(seed)
    try:
        sc = engine_scenarios.load(scenario)
        env = engine_scenarios.scenario_two_team_env(sc, num_envs=batch_size)
    except ConfigError as err:
        raise EvalError(str(err).replace("num_envs:", "batch_size:", 1)) from None
    b = scripted_system(sc.opponent)
    classes = np.asarray(env.rosters)[0]
    for side, s, roster in (("system", a, classes[:5]), ("opponent", b, classes[5:])):
        reason = s.problem(roster)
        if reason:
            raise EvalError(f"scenario {sc.id} ({side}): {reason}")
    sched = schedule(1, 1, n_games, 0, 0)
    meta = {"seed": int(seed), "tick_limit": int(env.rule_values.tick_limit),
            "winning_score": int(env.rule_values.winning_score)}  # fmt: skip
    level = mt.check_level(metrics)
    parts = PARTS
    layouts = [Layout(m.record_id, m.name, m.content_hash, m) for m in env.maps]
    played = play_schedule(
        env, parts, sched, np.arange(n_games), (a, b), level, meta, batch_size, 64, progress,
        None, None, layouts=layouts, rosters=parts.rosters(env),
    )  # fmt: skip
    assert played is not None  # n_games >= 2 games were scheduled
    games = normalize(played.sort_values("game", kind="stable"))
    return games.assign(scenario=sc.id)


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63:
        raise EvalError(f"seed: expected a non-negative integer, got {seed!r}")


def distinct_wins(games: pd.DataFrame) -> tuple[int, int]:
    """(distinct games, distinct wins): a game that repeats another (`distinct`: the same
    trajectory, as a mirror-image pair's two games) counts once."""
    new = ~repeated(games)
    return int(new.sum()), int((new & (games["result"] == "win").to_numpy()).sum())


def _fisher(wins: int, games: int, reference_wins: int, reference_games: int) -> float:
    table = [[wins, games - wins], [reference_wins, reference_games - reference_wins]]
    # scipy has no type hints here: its result unpacks as (statistic, pvalue), numpy floats
    _, pvalue = cast(tuple[float, float], fisher_exact(table, alternative="two-sided"))
    return float(pvalue)


def evaluate_scenarios(
    system: System | str, *, n_games: int = 256, seed: int = 0,
    scenarios: Sequence[Any] | None = None, reference: System | str | None = None,
    batch_size: int = 128, progress: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """Wins, draws and losses of `system` as team A in each scenario (default: all shipped), and
    the two-sided Fisher exact p of its wins against `reference`'s (default: random play) in
    the same number of games from the same seed, both counted over distinct games (a game that
    repeats another's trajectory counts once). One row per scenario (`SUMMARY_COLUMNS`)."""
    a = as_system(system, "system")
    ref = random_system() if reference is None else as_system(reference, "reference")
    _check_seed(seed)
    chosen = engine_scenarios.ids() if scenarios is None else list(scenarios)
    if not chosen:
        raise EvalError("scenarios: expected at least one scenario")
    rows = []
    for ref_scenario in chosen:
        kw = {"n_games": n_games, "seed": seed, "batch_size": batch_size, "progress": progress}
        games = scenario_games(a, ref_scenario, **kw)
        base = games if ref is a else scenario_games(ref, ref_scenario, **kw)
        sc = engine_scenarios.load(ref_scenario)
        result = cast(pd.Series, games["result"])
        wins = int((result == "win").sum())
        draws = int((result == "draw").sum())
        distinct, won = distinct_wins(games)
        ref_distinct, ref_won = distinct_wins(base)
        rows.append({
            "scenario": sc.id, "challenge": sc.challenge, "opponent": sc.opponent,
            "system": a.name, "games": len(games), "wins": wins, "draws": draws,
            "losses": len(games) - wins - draws, "win_rate": wins / len(games),
            "distinct": distinct, "distinct_wins": won, "reference": ref.name,
            "reference_distinct": ref_distinct, "reference_distinct_wins": ref_won,
            "p_value": _fisher(won, distinct, ref_won, ref_distinct),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def results_page(n_games: int = 256, seed: int = 20261006, progress: bool = True) -> str:
    """docs/scenarios/results.md: random play (`n_games` per scenario) and every scripted team
    (one mirrored pair each: they are deterministic) as team A in every shipped scenario."""
    table = evaluate_scenarios(random_system(), n_games=n_games, seed=seed, progress=progress)
    rows = [
        "# Scenario results of random play and the scripted teams",
        "",
        "<!-- Generated by `python -m marl_bgs_eval.tdm.scenarios --doc "
        "docs/scenarios/results.md`. -->",
        "",
        f"Team A played by each System, team B by the scenario's controller; seed {seed}.",
        f"Random play: {n_games} games per scenario. Scripted teams: one pair (the snapshot and",
        "its mirror image), since they are deterministic. W-D-L: wins, draws, losses.",
        "",
        "| scenario | challenge | opponent | random W-D-L | random win % | "
        + " | ".join(f"{name} W-D-L" for name in SCRIPTED_TEAMS)
        + " |",
        "|---:|---|---|---|---:|" + "---|" * len(SCRIPTED_TEAMS),
    ]
    for r in table.to_dict("records"):
        cells = []
        for name in SCRIPTED_TEAMS:
            g = scenario_games(scripted_system(name), int(r["scenario"]), n_games=2, seed=seed,
                               batch_size=2)  # fmt: skip
            result = cast(pd.Series, g["result"])
            wins, draws = int((result == "win").sum()), int((result == "draw").sum())
            cells.append(f"{wins}-{draws}-{len(g) - wins - draws}")
        rows.append(
            f"| {r['scenario']} | {r['challenge']} | `{r['opponent']}` | "
            f"{r['wins']}-{r['draws']}-{r['losses']} | {100 * r['win_rate']:.1f} | "
            + " | ".join(cells) + " |"
        )  # fmt: skip
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> None:
    """`python -m marl_bgs_eval.tdm.scenarios --doc docs/scenarios/results.md`."""
    parser = argparse.ArgumentParser(description=results_page.__doc__)
    parser.add_argument("--doc", type=Path, required=True)
    parser.add_argument("--games", type=int, default=256)
    args = parser.parse_args(argv)
    args.doc.write_text(results_page(args.games), encoding="utf-8")
    print(f"wrote {args.doc}")


if __name__ == "__main__":
    main()
