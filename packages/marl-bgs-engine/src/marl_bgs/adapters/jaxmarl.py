"""Team Deathmatch as a JaxMARL `MultiAgentEnv`: one game, vmapped outside as JaxMARL users do.

    import jax
    from marl_bgs.adapters.jaxmarl import TeamDeathmatchJaxMARL
    env = TeamDeathmatchJaxMARL(map_id=0)                      # any `marl_bgs.make` keyword
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    obs, state = jax.vmap(env.reset)(keys)                      # {agent: [8, obs_size]}
    actions = {a: jax.numpy.zeros(8, int) for a in env.agents}  # flat indices in [0, 198)
    obs, state, reward, done, info = jax.vmap(env.step)(keys, state, actions)

The state is the engine's `GameState`. Actions are flat indices `(move * 11 + target) * 2 + ult`
in each agent's own frame; `get_avail_actions` gives the exact legal set {agent: bool [198]};
illegal actions get the engine's documented repair. `step` keeps `MultiAgentEnv.step`'s contract:
it steps (`step_env`) and, where `done["__all__"]`, returns a start state and its observation
instead: `reset_state` when given, else the next episode of this game, drawn from
`jax.random.split(key)[1]` exactly as the native `reset_done` draws it (so spawn ends alternate per
`spawn_swap`; JaxMARL's default would redraw episode 0). `dones` is True for every agent when the
game ends (a decided game or the tick-limit draw); `info["truncated"]` tells the tick-limit draw
apart and `info["outcome"]` is 1 A wins, 2 B wins, 3 draw (0 running), both per agent [10] so
JaxMARL's `LogWrapper` and baselines can reshape them. `facts=True` adds `info["facts"]` (the
engine's `Facts`, not per agent).

The engine calls are jitted once at module level (`marl_bgs.adapters.game`, shared with the
PettingZoo adapter) with the settings as traced data, not with `self` as a static argument, so
adapters for other maps, rosters or rule values reuse the compiled programs; under a user's
`jax.jit` / `jax.vmap` they trace into one program as usual.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxmarl.environments.multi_agent_env import MultiAgentEnv
from jaxmarl.environments.spaces import Box, Discrete

from marl_bgs.adapters import game
from marl_bgs.constants import NUM_ACTIONS, NUM_SLOTS, TEAM_SIZE
from marl_bgs.reset import StartPool
from marl_bgs.state import GameState

_observe = jax.jit(game.observe, static_argnames=("shared_sight",))
_avail = jax.jit(game.avail)


class TeamDeathmatchJaxMARL(MultiAgentEnv):
    """One Team Deathmatch game (`tdm-v1`) behind JaxMARL's `MultiAgentEnv` interface."""

    mode = "tdm-v1"

    def __init__(self, *, facts: bool = False, **kwargs: Any) -> None:
        """`kwargs`: the keywords of `marl_bgs.make("tdm", ...)` except `num_envs` and
        `message_dim` (map_id, rosters, winning_score, tick_limit, spawn_swap, shared_sight...)."""
        self.native = game.native_env(kwargs, "JaxMARL")
        super().__init__(num_agents=NUM_SLOTS)
        self.agents = list(self.native.agents)
        self.with_facts = bool(facts)
        space = self.native.observation_space(self.agents[0])
        obs_space = Box(
            low=np.asarray(space.low), high=np.asarray(space.high), shape=space.shape,
            dtype=jnp.float32,
        )  # fmt: skip
        action_space = Discrete(NUM_ACTIONS)
        self.observation_spaces = dict.fromkeys(self.agents, obs_space)
        self.action_spaces = dict.fromkeys(self.agents, action_space)

    @property
    def pool(self) -> StartPool:
        """What starts are drawn from (maps, rosters, rule values): traced data."""
        return self.native.pool

    @property
    def agent_classes(self) -> dict[str, list[str]]:
        """The two teams."""
        return {"team_a": self.agents[:TEAM_SIZE], "team_b": self.agents[TEAM_SIZE:]}

    def _to_dict(self, stacked: jnp.ndarray) -> dict[str, jnp.ndarray]:
        return {a: stacked[i] for i, a in enumerate(self.agents)}

    def _flat(self, actions: dict[str, Any]) -> jnp.ndarray:
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"actions: missing agent(s) {missing}")
        return jnp.stack([jnp.asarray(actions[a], jnp.int32).reshape(()) for a in self.agents])

    def reset(self, key: jax.Array) -> tuple[dict[str, jnp.ndarray], GameState]:
        """A new game (episode 0 of game 0, as the native env's `reset` draws it): (obs, state)."""
        state, obs, _ = game.reset_game(
            key, self.pool, jnp.int32(0), self.native.spawn_swap, self.native.shared_sight
        )
        return self._to_dict(obs), state

    def get_obs(self, state: GameState) -> dict[str, jnp.ndarray]:
        """Each agent's flat permitted observation {agent: [obs_size]}."""
        return self._to_dict(_observe(state, self.native.shared_sight))

    def get_avail_actions(self, state: GameState) -> dict[str, jnp.ndarray]:
        """Legal flat actions {agent: bool [198]} (exact: move x (target, ultimate) pair)."""
        return self._to_dict(_avail(state))

    def step_env(
        self, key: jax.Array, state: GameState, actions: dict[str, Any]
    ) -> tuple[dict, GameState, dict, dict, dict]:
        """One tick without auto-reset: (obs, state, reward, dones, info)."""
        return self._tick(key, state, actions, None, auto_reset=False)

    def step(
        self,
        key: jax.Array,
        state: GameState,
        actions: dict[str, Any],
        reset_state: GameState | None = None,
    ) -> tuple[dict, GameState, dict, dict, dict]:
        """One tick, then the start state where the game ended: (obs, state, reward, dones, info).

        As `MultiAgentEnv.step`: `reset_state` when given, else a fresh start (here the game's
        next episode, drawn from `jax.random.split(key)[1]` as the native `reset_done` draws it).
        """
        return self._tick(key, state, actions, reset_state, auto_reset=True)

    def _tick(self, key, state, actions, reset_state, auto_reset):
        given = reset_state is not None
        t = game.step_game(
            key, state, self._flat(actions), reset_state if given else state, jnp.bool_(given),
            jnp.bool_(auto_reset), self.pool, self.native.spawn_swap, self.native.shared_sight,
        )  # fmt: skip
        info = {
            "outcome": jnp.full((NUM_SLOTS,), t.outcome),
            "truncated": jnp.full((NUM_SLOTS,), t.truncated),
        }
        if self.with_facts:
            info["facts"] = t.facts
        return self._to_dict(t.obs), t.state, self._to_dict(t.reward), self._dones(t.done), info

    def _dones(self, done: jnp.ndarray) -> dict[str, jnp.ndarray]:
        return dict.fromkeys(self.agents, done) | {"__all__": done}
