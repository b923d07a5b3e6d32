"""`TDMParts`: how evaluation plays, counts and checks Team Deathmatch games."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import pandas as pd

from marl_bgs import BatchedEnv, ModeKit, TeamInputs
from marl_bgs.tdm.classes import CLASS_NAMES
from marl_bgs_eval import fingerprint as fp
from marl_bgs_eval.measures import Measure
from marl_bgs_eval.modes import EvalParts, FailRows, Layout
from marl_bgs_eval.tdm import metrics as mt
from marl_bgs_eval.tdm import results
from marl_bgs_eval.tdm.maps import resolve_maps
from marl_bgs_eval.tdm.metrics.analysis import MEASURES
from marl_bgs_eval.tdm.metrics.team import TEAM_MEASURES
from marl_bgs_eval.tdm.replay import REPLAY
from marl_bgs_eval.tdm.scripted import SCRIPTED_SYSTEMS, scripted_system


class TDMParts(EvalParts):
    """Maps (shipped, named or from files), roster pairs, points and the metric families."""

    def layouts(self, kit: ModeKit, maps: Any, split: str | None) -> list[Layout]:
        del kit
        return [Layout(s.record_id, s.name, s.content_hash, s) for s in resolve_maps(maps, split)]

    def build(
        self, kit: ModeKit, layouts: Sequence[Layout], num_envs: int, rosters: Any, mesh: Any,
        settings: dict[str, Any],
    ) -> BatchedEnv:  # fmt: skip
        return kit.build(
            map_id=[layout.ref for layout in layouts], num_envs=num_envs, rosters=rosters,
            mesh=mesh, **settings,
        )  # fmt: skip

    def rosters(self, env: Any) -> list[tuple[str, ...]]:
        return [(results.roster_text(p[:5]), results.roster_text(p[5:])) for p in env.rosters]

    def start_games(self, env: Any, layout: Any, roster: Any, swap: Any, keys: Any) -> Any:
        del keys  # a pool entry is a whole start: nothing to draw
        return env.start_games(layout, roster, swap)

    def meta(self, env: Any) -> dict[str, int]:
        rules = env.rule_values
        return {"tick_limit": int(rules.tick_limit), "winning_score": int(rules.winning_score)}

    def problem(self, env: Any, roster: int, team: int, system: Any) -> str | None:
        pair = env.rosters[roster]
        return system.problem(pair[:5] if team == 0 else pair[5:])

    def identity(
        self, roster: Any, rosters: Sequence[tuple[str, ...]], meta: dict[str, int]
    ) -> dict[str, Any]:
        return {
            "roster_a": [rosters[k][0] for k in roster],
            "roster_b": [rosters[k][1] for k in roster],
            "winning_score": meta["winning_score"],
        }

    def record_games(
        self, kit: ModeKit, team_a: Any, team_b: Any, rows: pd.DataFrame,
        settings: dict[str, Any],
    ) -> list[Any]:  # fmt: skip
        """Team Deathmatch's own replays of the rows (`marl_bgs_eval.tdm.replays.record`)."""
        del kit
        from marl_bgs_eval.tdm.replays import record

        return record(team_a, team_b, rows, **settings)

    def occupied(self, inputs: TeamInputs) -> jax.Array:
        return inputs.views.public.roster_class[:, 0, :5] > 0

    def final(self, state: Any) -> jax.Array:
        return state.score

    def metric_columns(self, level: str) -> list[str]:
        return mt.columns(level)

    def metric_schema(self) -> pd.DataFrame:
        return mt.schema()

    def metric_page(self) -> str | None:
        return mt.markdown()

    def is_amount(self, column: str) -> bool:
        return mt.is_amount(column)

    def fresh_memory(self, n: int) -> Any:
        return mt.fresh_memory(n)

    def tally(self, level: str, tick: Any, memory: Any) -> tuple[jax.Array, Any]:
        pair = jax.tree.map(
            lambda a, b: jnp.concatenate([a, b], axis=1),
            tick.inputs[0].masks.pair,
            tick.inputs[1].masks.pair,
        )
        return mt.tally(level, tick.before, tick.facts, pair, memory)

    def fingerprint(self, trace: jax.Array, tick: Any) -> jax.Array:
        return fp.fold(trace, tick.facts.accepted, tick.facts.died, tick.state.score)

    def row_columns(
        self, sched: pd.DataFrame, final: Any, counters: pd.DataFrame,
        rosters: Sequence[tuple[str, ...]], meta: dict[str, int],
    ) -> dict[str, Any]:  # fmt: skip
        return results.row_columns(sched, final, counters, rosters, meta)

    def check_rows(self, df: pd.DataFrame, fail: FailRows) -> None:
        results.check_rows(df, fail)

    def measures(self) -> dict[str, Measure]:
        return dict(MEASURES)

    def team_measures(self) -> dict[str, Measure]:
        return dict(TEAM_MEASURES)


PARTS = TDMParts(
    columns=results.COLUMNS,
    same_in_pair=tuple(results.SAME_IN_PAIR),
    same_game=tuple(results.SAME_GAME),
    outcome_columns=tuple(results.OUTCOME),
    summary=("points_a", "points_b"),
    replay=REPLAY,
    class_names=CLASS_NAMES[1:],  # id 0 is an unused slot
    systems={name: partial(scripted_system, name) for name in SCRIPTED_SYSTEMS},
)
__all__ = ["PARTS", "TDMParts"]
