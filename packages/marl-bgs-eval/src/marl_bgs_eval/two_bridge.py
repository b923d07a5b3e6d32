"""Two-Bridge evaluation: outcome distributions per variant, never one number over variants.

    table = marl_bgs_eval.two_bridge.evaluate_variants(policy, episodes=32, seed=0)
    print(marl_bgs_eval.two_bridge.outcome_table(table))

`policy` is an engine team policy, or a function `env -> policy` (the action count depends on
the variant's enemy count). Win rate = (navigation wins + combat wins) / episodes, with a 95%
Wilson interval (scipy.stats.binomtest) per variant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import jax
import numpy as np
import pandas as pd
from scipy.stats import binomtest

import marl_bgs
from marl_bgs.core.team import TeamPolicy
from marl_bgs.two_bridge import OUTCOMES, VARIANTS
from marl_bgs.two_bridge.layout import COMBAT_WIN, NAVIGATION_WIN
from marl_bgs_eval.episodes import play_episodes
from marl_bgs_eval.errors import EvalError

PolicyFor = TeamPolicy | Callable[[Any], TeamPolicy]
WINS = (OUTCOMES[NAVIGATION_WIN], OUTCOMES[COMBAT_WIN])


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


def _policy_for(policy: PolicyFor, env: Any) -> TeamPolicy:
    if callable(getattr(policy, "act", None)):
        return cast(TeamPolicy, policy)
    return cast(Callable[[Any], TeamPolicy], policy)(env)


def evaluate_variants(
    policy: PolicyFor,
    variants: str | Sequence[str] = "all",
    episodes: int = 32,
    seed: int = 0,
    **settings: Any,
) -> pd.DataFrame:
    """One row per episode: variant, episode, outcome, outcome_code, ticks, return, win.
    Episode i of a variant starts from (seed, variant, i) alone; `settings` go to `make`."""
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise EvalError(f"episodes: expected a positive integer, got {episodes!r}")
    frames = []
    for variant in _variants(variants):
        env = marl_bgs.make("two-bridge", variant=variant, num_envs=episodes, **settings)
        chosen = _policy_for(policy, env)
        key = jax.random.fold_in(jax.random.key(seed), VARIANTS.index(variant))
        played = play_episodes(env, chosen, key)
        names = [OUTCOMES[c] for c in played.outcome]
        frames.append(
            pd.DataFrame(
                {
                    "variant": variant,
                    "episode": range(episodes),
                    "outcome": names,
                    "outcome_code": played.outcome,
                    "ticks": played.ticks,
                    "return": played.returns,
                    "win": [name in WINS for name in names],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


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
