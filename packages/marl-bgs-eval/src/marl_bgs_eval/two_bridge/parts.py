"""`BridgeParts`: how evaluation plays, counts and checks Two-Bridge episodes (team A is the
five Marines; the mode plays the enemies, recorded as system_b "two-bridge-enemies")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from marl_bgs.two_bridge import OUTCOMES
from marl_bgs.two_bridge.kit import KIT
from marl_bgs_eval import fingerprint as fp
from marl_bgs_eval.episode_replays import episode_schema
from marl_bgs_eval.measures import GENERIC, Measure, column_mean
from marl_bgs_eval.modes import FLOAT, STR, EvalParts, FailRows

RETURN = "return"  # the team's summed official reward (every agent shares it)


class BridgeParts(EvalParts):
    """Variants as layouts, the outcome's name and the team's return."""

    def final(self, state: Any) -> jax.Array:
        return state.outcome

    def metric_columns(self, level: str) -> list[str]:
        del level
        return [RETURN]

    def is_amount(self, column: str) -> bool:
        return column == RETURN

    def tally(self, level: str, tick: Any, memory: Any) -> tuple[jax.Array, Any]:
        del level
        live = tick.before.outcome == 0
        return jnp.where(live, tick.reward[:, 0], 0.0)[:, None], memory

    def fingerprint(self, trace: jax.Array, tick: Any) -> jax.Array:
        """Starts are drawn at random and positions are real numbers: fold the accepted
        actions, the outcome and every unit's position and health bits after the tick."""
        s = tick.state
        floats = [s.friend_pos, s.friend_health, s.enemy_pos, s.enemy_health, s.beacon]
        bits = [jax.lax.bitcast_convert_type(x, jnp.uint32) for x in floats]
        return fp.fold_words(trace, [tick.facts.accepted, s.outcome, *bits])

    def row_columns(
        self, sched: pd.DataFrame, final: Any, counters: pd.DataFrame,
        rosters: Sequence[tuple[str, ...]], meta: dict[str, int],
    ) -> dict[str, Any]:  # fmt: skip
        del sched, rosters, meta
        return {"outcome": [OUTCOMES[int(c)] for c in np.asarray(final)], RETURN: counters[RETURN]}

    def check_rows(self, df: pd.DataFrame, fail: FailRows) -> None:
        fail(~df["outcome"].isin(OUTCOMES[1:]), f"outcome must be one of {list(OUTCOMES[1:])}")
        result_of = dict(zip(OUTCOMES, KIT.results, strict=True))
        want = df["outcome"].map(lambda name: result_of.get(name, ""))
        fail(df["result"] != want, "result does not follow from outcome")

    def measures(self) -> dict[str, Measure]:
        mean_return = Measure(
            "mean_return", "mean", "reward", "the team's return per episode", column_mean(RETURN)
        )
        return {**GENERIC, mean_return.name: mean_return}


PARTS = BridgeParts(
    columns={"outcome": STR, RETURN: FLOAT},
    opponent="two-bridge-enemies",
    outcome_columns=("outcome", RETURN),
    signed=(RETURN,),
    summary=(RETURN,),
    replay=episode_schema(legacy="marl-bgs-episode-replay-v1"),
)
