"""Two-Bridge evaluation: outcome distributions per variant, never one number over variants.

    table = marl_bgs_eval.two_bridge.evaluate_variants(policy, episodes=32, seed=0)
    print(marl_bgs_eval.two_bridge.outcome_table(table))
    losses = table[table["outcome"] == "combat loss"].head(2)
    replays = marl_bgs_eval.two_bridge.record_rows(policy, losses, seed=0)  # as they were played

Both go through the path every mode takes: the variants are played by `marl_bgs_eval.evaluate`
(mode "two-bridge", one call per variant, spawn-swapped pairs, its keys) and recorded by
`marl_bgs_eval.record_games`. `policy` is an engine team policy, or a function `env -> policy`
(the action count depends on the variant's enemy count). Win rate = (navigation wins + combat
wins) / episodes, with a 95% Wilson interval (scipy.stats.binomtest) per variant.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy.stats import binomtest

import marl_bgs
from marl_bgs.core.team import TeamPolicy
from marl_bgs.two_bridge import OUTCOMES, VARIANTS
from marl_bgs.two_bridge.layout import COMBAT_WIN, NAVIGATION_WIN
from marl_bgs_eval import results
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.evaluate import evaluate
from marl_bgs_eval.game_replays import record_games
from marl_bgs_eval.systems import System, system

PolicyFor = TeamPolicy | Callable[[Any], TeamPolicy]
WINS = (OUTCOMES[NAVIGATION_WIN], OUTCOMES[COMBAT_WIN])
MODE = "two-bridge"


def _variants(variants: str | Sequence[str]) -> list[str]:
    names = (
        list(VARIANTS)
        if variants == "all"
        else [variants]
        if isinstance(variants, str)
        else list(variants)
    )
    bad = [v for v in names if v not in VARIANTS]
    if bad or not names:
        raise EvalError(f"variants: unknown {bad or names}; allowed 'all' or {list(VARIANTS)}")
    return names


def _system(policy: PolicyFor, variant: str, settings: dict[str, Any]) -> System:
    """The policy for `variant` as a System of Two-Bridge (named after the policy)."""
    if callable(getattr(policy, "act", None)):
        return _as_system(policy)
    env = marl_bgs.make(MODE, variant=variant, num_envs=1, **settings)
    return _as_system(cast(Callable[[Any], TeamPolicy], policy)(env))


@functools.lru_cache(maxsize=64)
def _as_system(policy: Any) -> System:
    """One System per policy object, so evaluation's compiled programs serve every variant of
    a shape group and the recording of its games."""
    return system(policy.act, name=str(getattr(policy, "name", "policy")), init=policy.init,
                  mode=MODE)  # fmt: skip


def evaluate_variants(
    policy: PolicyFor,
    variants: str | Sequence[str] = "all",
    episodes: int = 32,
    seed: int = 0,
    **settings: Any,
) -> pd.DataFrame:
    """One row per episode: `evaluate`'s results row of the game (`game`, `seed_number`,
    `a_spawn`, `outcome`, `ticks`, `return`, ...) with `variant`, `episode` (0 .. episodes - 1
    within the variant), `outcome_code` and `win`. The k-th variant listed plays games k *
    episodes onwards of seed `seed` (an even number of episodes: spawn-swapped pairs);
    `settings` go to `make` (`tick_limit`, `weights`, ...)."""
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 2 or episodes % 2:
        raise EvalError(f"episodes: expected an even positive integer, got {episodes!r}")
    frames = []
    for k, variant in enumerate(_variants(variants)):
        games = evaluate(
            _system(policy, variant, settings), mode=MODE, maps=variant, games_per_map=episodes,
            seed=seed, metrics="none", batch_size=episodes, first_game=k * episodes,
            first_seed_number=k * episodes // 2, **settings,
        )  # fmt: skip
        names = games["outcome"].tolist()
        frames.append(
            games.assign(
                variant=variant,
                episode=games["game"].to_numpy() - k * episodes,
                outcome_code=[OUTCOMES.index(name) for name in names],
                win=[name in WINS for name in names],
            )
        )
    return pd.concat(frames, ignore_index=True)


def record_rows(
    policy: PolicyFor, rows: pd.DataFrame, seed: int = 0, **settings: Any
) -> list[Replay]:
    """Replays (`marl_bgs_eval.record_games`) of rows picked from
    `evaluate_variants(policy, seed=seed, **settings)`, one per row in order: each game as it
    was played there (checked: a row whose outcome or length differs is an error, e.g. another
    seed or settings)."""
    missing = {"variant", "episode", "outcome_code", "ticks", "game", "seed"} - set(rows.columns)
    if missing:
        raise EvalError(f"rows: missing column(s) {sorted(missing)}")
    if np.any(rows["seed"].to_numpy() != seed):
        raise EvalError(f"seed: {seed} differs from the rows' seed column")
    plain = rows[[c for c in results.columns(MODE) if c in rows.columns]]
    made: dict[int, Replay] = {}
    for variant in dict.fromkeys(_variants(list(rows["variant"]))):
        picked = cast(pd.DataFrame, plain[rows["variant"].to_numpy() == variant])
        replays = record_games(_system(policy, variant, settings), None, picked, **settings)
        made |= {r.header["game"]: r for r in replays}
    return [made[int(g)] for g in rows["game"]]


def outcome_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Per variant (rows in the paper's order): episodes, the share of each outcome, the win
    rate and its 95% Wilson interval, the mean return and length."""
    missing = {"variant", "outcome", "win", "return", "ticks"} - set(episodes.columns)
    if missing:
        raise EvalError(f"episodes: missing column(s) {sorted(missing)}")
    rows = []
    for variant in [v for v in VARIANTS if v in set(episodes["variant"])]:
        games = cast(pd.DataFrame, episodes.loc[episodes["variant"] == variant])
        outcome = games["outcome"].to_numpy()
        n, wins = len(games), int(games["win"].to_numpy().sum())
        ci = binomtest(wins, n).proportion_ci(method="wilson")
        shares = {name: float(np.mean(outcome == name)) for name in OUTCOMES[1:]}
        rows.append(
            {
                "variant": variant,
                "episodes": n,
                **shares,
                "win rate": wins / n,
                "win low": ci.low,
                "win high": ci.high,
                "mean return": float(games["return"].to_numpy().mean()),
                "mean ticks": float(games["ticks"].to_numpy().mean()),
            }
        )
    return pd.DataFrame(rows).set_index("variant")
