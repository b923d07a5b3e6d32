"""Curricula through the engine's start-state pools: every stage's games (maps x roster pairs with
its winning score) are entries of one pool, and the current stage only changes the pool's draw
weights, which are data: a stage change never compiles anything. Finished games restart from the
current stage (running games finish under the stage they started in). The stage moves on after
its game steps, or once an update's progress signal reaches the stage's threshold."""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs import BatchedEnv, StartPool, concat_pools
from marl_bgs.core.arena import MAX_OBSTACLES
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.tdm.config import RuleValues
from marl_bgs.tdm.mode import tdm_pool
from marl_bgs.tdm.start import with_active_obstacles
from marl_bgs_train.tdm.game import LayoutVariation, Stage, TDMGame


def vary_layouts(pool: StartPool, variation: LayoutVariation) -> StartPool:
    """`pool` and `variation.variants` copies of it with obstacles switched off at random (see
    `LayoutVariation`), each copy drawn as often as the original; `pool` itself when
    `variation.dropout` is 0."""
    if variation.dropout == 0.0:
        return pool
    rng = np.random.default_rng(variation.seed)
    kept = rng.random((variation.variants, pool.size, MAX_OBSTACLES)) >= variation.dropout
    per_side = jax.vmap(with_active_obstacles, in_axes=(0, None))  # both ends alike
    switch = jax.jit(jax.vmap(per_side))  # over entries
    copies = [StartPool(switch(pool.states, jnp.asarray(k)), pool.weights) for k in kept]
    return concat_pools([pool, *copies])


@pytree_dataclass
class CurriculumState(PyTree):
    """Where a run is in its curriculum."""

    stage: jax.Array  # int32: the current stage (0 without a curriculum)
    entered: jax.Array  # int32: game steps done when it began

    @staticmethod
    def create() -> CurriculumState:
        """The first stage, entered at step 0."""
        return CurriculumState(jnp.int32(0), jnp.int32(0))


class Curriculum:
    """The stages' start states as one pool, and the rule that moves a run between stages."""

    def __init__(
        self, stages: Sequence[Stage], tick_limit: int, layouts: LayoutVariation | None = None
    ) -> None:
        pools = [
            vary_layouts(
                tdm_pool(
                    list(stage.maps),
                    [list(pair) for pair in stage.rosters],
                    RuleValues(winning_score=stage.winning_score, tick_limit=tick_limit),
                ),
                layouts or LayoutVariation(),
            )
            for stage in stages
        ]
        self.stages = tuple(stages)
        self.pool = concat_pools(pools)
        weights = np.zeros((len(pools), self.pool.size), np.float32)
        offset = 0
        for s, pool in enumerate(pools):
            share = np.asarray(pool.weights)
            weights[s, offset : offset + pool.size] = share / share.sum()
            offset += pool.size
        self.weights = jnp.asarray(weights)  # [stages, entries]: each stage draws only its own

    def pool_at(self, state: CurriculumState) -> StartPool:
        """The pool new games draw from in the current stage."""
        return StartPool(states=self.pool.states, weights=self.weights[state.stage])

    def advance(
        self, state: CurriculumState, steps: jax.Array, games: dict[str, jax.Array]
    ) -> CurriculumState:
        """The stage after an update that ended at `steps` game steps with these game metrics
        (`SelfPlay._game_metrics`)."""
        count = jnp.maximum(games["games"], 1)
        signals = {
            "win_rate": games["wins"] / count,
            "margin": games["margin_sum"] / count,
            "reward_per_tick": games["reward_per_tick"],
        }
        finished_any = games["games"] > 0
        reached = [
            jnp.bool_(False)
            if not stage.progress
            else (signals[stage.progress] >= stage.threshold)
            & (finished_any | (stage.progress == "reward_per_tick"))
            for stage in self.stages
        ]
        limits = jnp.asarray([stage.steps for stage in self.stages], jnp.int32)
        limit = limits[state.stage]
        by_steps = (limit > 0) & (steps - state.entered >= limit)
        by_progress = jnp.stack(reached)[state.stage]
        move = (state.stage < len(self.stages) - 1) & (by_steps | by_progress)
        return CurriculumState(
            state.stage + move.astype(jnp.int32), jnp.where(move, steps, state.entered)
        )


class TDMStarts:
    """Where a Team Deathmatch run's new games start (`marl_bgs_train.modes.Starts`): the
    curriculum's current stage, or else the training maps with their layout variants."""

    def __init__(self, env: BatchedEnv, game: TDMGame) -> None:
        self.curriculum = (
            Curriculum(game.curriculum, game.tick_limit, game.layouts) if game.curriculum else None
        )
        self.start_pool = vary_layouts(env.pool, game.layouts)
        self.varies = self.curriculum is not None

    def first(self) -> CurriculumState:
        return CurriculumState.create()

    def pool(self, state: CurriculumState) -> StartPool:
        return self.start_pool if self.curriculum is None else self.curriculum.pool_at(state)

    def advance(
        self, state: CurriculumState, steps: jax.Array, games: dict[str, jax.Array]
    ) -> CurriculumState:
        return state if self.curriculum is None else self.curriculum.advance(state, steps, games)

    def stage(self, state: CurriculumState) -> jax.Array:
        return state.stage
