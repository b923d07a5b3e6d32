"""Two-Bridge evaluation: outcome distributions per variant, never one number over variants.

    table = marl_bgs_eval.two_bridge.evaluate_variants(policy, episodes=32, seed=0)
    print(marl_bgs_eval.two_bridge.outcome_table(table))
    losses = table[table["outcome"] == "combat loss"].head(2)
    replays = marl_bgs_eval.two_bridge.record_rows(policy, losses, seed=0)  # as they were played

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
from marl_bgs_eval import episode_replays
from marl_bgs_eval.array_zip import Replay
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


def _key(seed: int, variant: str) -> jax.Array:
    return jax.random.fold_in(jax.random.key(seed), VARIANTS.index(variant))


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
        played = play_episodes(env, chosen, _key(seed, variant))
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


def record_rows(
    policy: PolicyFor, rows: pd.DataFrame, seed: int = 0, **settings: Any
) -> list[Replay]:
    """Episode replays (`marl_bgs_eval.episode_replays`) of rows picked from
    `evaluate_variants(policy, seed=seed, **settings)`, one per row in order: each episode as it
    was played there (checked: a row whose outcome or length differs is an error, e.g. another
    seed or settings)."""
    missing = {"variant", "episode", "outcome_code", "ticks"} - set(rows.columns)
    if missing:
        raise EvalError(f"rows: missing column(s) {sorted(missing)}")
    made: dict[tuple[str, int], Replay] = {}
    for variant in dict.fromkeys(_variants(list(rows["variant"]))):
        picked = [int(e) for e in rows.loc[rows["variant"] == variant, "episode"]]
        env = marl_bgs.make("two-bridge", variant=variant, **settings)
        replays = episode_replays.record(
            _policy_for(policy, env), _key(seed, variant), mode=env.spec.id,
            games=sorted(set(picked)), settings={"variant": variant, **settings},
        )  # fmt: skip
        made |= {(variant, r.header["game"]): r for r in replays}
    out = []
    columns = rows[["variant", "episode", "outcome_code", "ticks"]]
    for variant, episode, code, ticks in columns.itertuples(index=False):
        replay = made[(variant, int(episode))]
        if (replay.header["outcome"], replay.ticks) != (int(code), int(ticks)):
            raise EvalError(
                f"rows: {variant} episode {episode} ended in outcome {replay.header['outcome']} "
                f"after {replay.ticks} steps, the row says {code} after {ticks} (another seed or "
                "settings than the evaluation's?)"
            )
        out.append(replay)
    return out


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
