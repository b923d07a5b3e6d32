"""Two-Bridge as a `Mode` (`two-bridge-v1`), and `make_two_bridge`, what
`marl_bgs.make("two-bridge", ...)` builds. Nothing here comes from Team Deathmatch: the mode
writes its rules and the generic env does the rest.

The mode object holds only static settings (the enemy count, which fixes the shapes, and fog of
war); the layouts, their weights and the step limit are data in the start-state pool.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from marl_bgs.core.checks import check_bool, check_int, shown
from marl_bgs.core.env import BatchedEnv, RewardFn
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.mode import ModeSpec, OneHead
from marl_bgs.core.pool import check_spawn_swap, check_weights
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.two_bridge import layout as lay
from marl_bgs.two_bridge import views
from marl_bgs.two_bridge.reward import team_reward
from marl_bgs.two_bridge.rules import action_masks, pathable, transition
from marl_bgs.two_bridge.start import start, variant_pool
from marl_bgs.two_bridge.state import BridgeFacts, BridgeState

MODE_ID = "two-bridge-v1"
AGENTS = tuple(f"marine_{i}" for i in range(lay.NUM_FRIENDS))


@pytree_dataclass
class BridgeMasks(PyTree):
    """Legal actions of each friend: `flat` bool [5, 9 + N_E] (one head, so flat is all)."""

    flat: jax.Array


@cache
def _spec(num_enemies: int) -> ModeSpec:
    return ModeSpec(
        id=MODE_ID,
        agents=AGENTS,
        teams=(tuple(range(lay.NUM_FRIENDS)),),
        action_heads=(lay.NUM_BASE_ACTIONS + num_enemies,),
        obs_size=views.obs_size(num_enemies),
        state_size=views.state_size(num_enemies),
        head_names=("action",),
        dense_reward=True,
    )


@dataclass(frozen=True)
class TwoBridge(OneHead):
    """The Two-Bridge rules as a `Mode`; `num_enemies` (3, 5 or 8) and `fog` are static."""

    num_enemies: int = 5
    fog: bool = False

    @property
    def spec(self) -> ModeSpec:
        return _spec(self.num_enemies)

    def start(self, key: jax.Array, state: BridgeState) -> BridgeState:
        return start(key, state)

    def transition(
        self, state: BridgeState, actions: jax.Array, messages: jax.Array | None = None
    ) -> tuple[BridgeState, BridgeFacts]:
        del messages  # the mode has no messages (message_dim 0)
        return transition(state, actions, self.fog)

    def reward(self, state: BridgeState, next_state: BridgeState, facts: Any) -> jax.Array:
        del facts
        return team_reward(state, next_state)

    def truncated(self, state: BridgeState) -> jax.Array:
        return state.outcome == lay.TIMEOUT_LOSS

    def observe(self, state: BridgeState, full: bool = False) -> jax.Array:
        return jnp.stack(self.observe_agents(state, full))

    def observe_agents(self, state: BridgeState, full: bool = False) -> tuple[jax.Array, ...]:
        row = views.global_row(state) if full else views.flat(views.team_view(state, self.fog))
        return (row,) * lay.NUM_FRIENDS

    def views(self, state: BridgeState) -> views.BridgeView:
        view = views.team_view(state, self.fog)
        return jax.tree.map(lambda a: jnp.broadcast_to(a, (lay.NUM_FRIENDS, *a.shape)), view)

    def masks(self, state: BridgeState) -> BridgeMasks:
        return BridgeMasks(flat=action_masks(state, self.fog))

    def observation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return views.bounds(self.num_enemies)

    def agent_facts(self, facts: BridgeFacts) -> dict[str, jax.Array]:
        return {
            "shots": (facts.friend_target >= 0).astype(jnp.float32),
            "damage_taken": facts.friend_damage,
            "rejected": facts.rejected.astype(jnp.float32),
        }

    def tick_invariants(
        self, state: BridgeState, next_state: BridgeState, facts: BridgeFacts
    ) -> dict[str, jax.Array]:
        masks = action_masks(state, self.fog)
        running = state.outcome == lay.RUNNING
        rows = jnp.arange(lay.NUM_FRIENDS)
        width = masks.shape[1]
        req = facts.requested
        legal = (req >= 0) & (req < width) & masks[rows, jnp.clip(req, 0, width - 1)]
        dead = ~state.friend_alive
        fired = facts.friend_target >= 0
        target_dist = jnp.linalg.norm(
            state.friend_pos - state.enemy_pos[jnp.maximum(facts.friend_target, 0)], axis=-1
        )
        return {
            "no-op is always legal": jnp.all(masks[:, 0]),
            "a dead friend may only idle": ~jnp.any(masks[:, 1:] & dead[:, None]),
            "accepted actions are legal": ~jnp.any(~masks[rows, facts.accepted] & running),
            "an action is repaired exactly when it is illegal": ~jnp.any(
                (facts.rejected == legal) & running
            ),
            "dead friends never move or fire": ~jnp.any(dead & (facts.moved | fired)),
            "shots land only within attack range": ~jnp.any(
                fired & (target_dist > lay.ATTACK_RANGE + 1e-4)
            ),
            "enemies never move": jnp.all(next_state.enemy_pos == state.enemy_pos),
            "the beacon never moves": jnp.all(next_state.beacon == state.beacon),
            "health never rises": jnp.all(next_state.friend_health <= state.friend_health)
            & jnp.all(next_state.enemy_health <= state.enemy_health),
            "no friend stands on the cliff or off the field": jnp.all(
                pathable(next_state.friend_pos) | ~next_state.friend_alive
            ),
            "a finished game does not change": ~(
                ~running & jnp.any(next_state.friend_pos != state.friend_pos)
            ),
        }


class TwoBridgeEnv(BatchedEnv):
    """The batched Two-Bridge env: a `BatchedEnv` that remembers its variants."""

    def __init__(self, mode: TwoBridge, pool: Any, *, variants: tuple[str, ...], **kwargs: Any):
        super().__init__(mode, pool, **kwargs)
        self.variants = variants
        self.fog = mode.fog


def parse_variants(variant: Any) -> tuple[tuple[str, ...], int, list[int]]:
    """(names, enemy count, layout indices) of a variant name or a list of names sharing one
    unit count, e.g. "V2_Base" or ["V1_Base", "V1_Navigate"]."""
    names = [variant] if isinstance(variant, str) else variant
    if not isinstance(names, list | tuple) or not names:
        raise ConfigError(
            f"variant: expected a name or a non-empty list; allowed {list(lay.VARIANTS)}"
        )
    for name in names:
        if not isinstance(name, str) or name not in lay.VARIANTS:
            raise ConfigError(f"variant: unknown {shown(name)}; allowed {list(lay.VARIANTS)}")
    names = [str(name) for name in names]  # numpy strings become plain ones
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ConfigError(f"variant: {twice} listed more than once")
    counts = {name.split("_")[0] for name in names}
    if len(counts) > 1:
        raise ConfigError(
            f"variant: {list(names)} mixes unit counts {sorted(counts)}; the enemy count fixes "
            "the shapes, so one env plays one of V1, V2, V3"
        )
    layouts = [list(lay.LAYOUTS).index(name.split("_")[1]) for name in names]
    return tuple(names), lay.ENEMY_COUNTS[counts.pop()], layouts


def make_two_bridge(
    *,
    variant: Any = "V2_Base",
    num_envs: int = 1,
    fog: bool = False,
    tick_limit: int = lay.TICK_LIMIT,
    spawn_swap: str = "none",
    weights: Any = None,
    reward_fn: RewardFn | None = None,
    mesh: Mesh | None = None,
    mesh_axis: str | None = None,
    **unknown: Any,
) -> TwoBridgeEnv:
    """Two-Bridge with `num_envs` games; every keyword is validated, errors name the field.

    `variant`: one of the nine maps ("V1_Base" ... "V3_Navigate") or a list sharing a unit
    count, drawn per episode by `weights`; `fog`: fog of war (off in the paper);
    `spawn_swap`: "none" keeps the paper's sides, "half"/"all"/"random" mirror left and right.
    """
    if "side_rule" in unknown:
        raise ConfigError(
            "side_rule: renamed spawn_swap (the same values, the same keyword as every mode's); "
            f"pass spawn_swap={shown(unknown['side_rule'])}"
        )
    if unknown:
        known = [k for k in inspect.signature(make_two_bridge).parameters if k != "unknown"]
        raise ConfigError(
            f"{next(iter(unknown))[:60]}: not a setting of two-bridge; allowed {known}"
        )
    names, num_enemies, layouts = parse_variants(variant)
    fog = check_bool(fog, "fog")
    tick_limit = check_int(tick_limit, "tick_limit", 1, 100_000)
    spawn_swap = check_spawn_swap(spawn_swap)
    pool = variant_pool(layouts, num_enemies, tick_limit, check_weights(weights, len(layouts)))
    return TwoBridgeEnv(
        TwoBridge(num_enemies=num_enemies, fog=fog), pool, variants=names, num_envs=num_envs,
        spawn_swap=spawn_swap, reward_fn=reward_fn, mesh=mesh, mesh_axis=mesh_axis,
    )  # fmt: skip
