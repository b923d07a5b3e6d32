"""Any registered mode as a PettingZoo `ParallelEnv`: one game on the host, numpy in and out.

    from marl_bgs.adapters.pettingzoo import PettingZooEnv
    env = PettingZooEnv("tdm", map_id=0)                        # any `marl_bgs.make` keyword
    obs, infos = env.reset(seed=0)
    while env.agents:
        actions = {a: env.action_space(a).sample(obs[a]["action_mask"]) for a in env.agents}
        obs, rewards, terminations, truncations, infos = env.step(actions)

Observations follow PettingZoo's convention for masked environments: each agent's observation is a
`Dict` with "observation" (the flat float32 view, the native env's `observation_space`) and
"action_mask" (int8 [num_actions], 1 = legal; exactly the native `get_avail_actions`). Actions
are `Discrete(num_actions)` flat indices in the agent's own frame (Team Deathmatch: 198, `(move *
11 + target) * 2 + ultimate`); an illegal index gets the mode's documented repair, a value outside
[0, num_actions) is an error.

All agents stay until the game ends (in Team Deathmatch dead agents wait for their respawn wave;
their mask is stay only). A game decided by its win condition sets `terminations`; one ended by the
clock (the mode's `truncated`) sets `truncations`; then `agents` is empty until `reset`.
`reset(seed=s)` starts the same game as
`marl_bgs.make("tdm", num_envs=1, ...).reset(jax.random.key(s))`; a later `reset()` without a seed
starts the next episode of that stream, as the native `reset_done` draws it. `options` are
accepted and ignored (there are none). `render_mode` is None (no renderer yet).

The tick and the start are jitted once at module level (`marl_bgs.adapters.game`) with the settings
as traced data, so every instance with any map, roster or rule values shares the compiled program.
The mode's state is `env.game_state`; the last tick's facts are `env.last_facts`.

Vector wrappers that run environments in subprocesses (e.g. SuperSuit's `concat_vec_envs_v1` with
`num_cpus > 0`, or gymnasium's `AsyncVectorEnv`) must use the "spawn" start method
(`multiprocessing.set_start_method("spawn")`, or their `context="spawn"` option): JAX is
multithreaded, and a forked child of a process that has used JAX can deadlock.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from marl_bgs.adapters import game
from marl_bgs.core.errors import ConfigError


class PettingZooEnv(ParallelEnv):
    """One game of a registered mode behind PettingZoo's `ParallelEnv` interface."""

    # ParallelEnv's `metadata` is an instance attribute: the default, `__init__` adds "name".
    metadata: dict[str, Any] = {"render_modes": [], "is_parallelizable": True}  # noqa: RUF012

    def __init__(self, mode: str, *, render_mode: str | None = None, **settings: Any) -> None:
        """`settings`: the keywords of `marl_bgs.make(mode, ...)` except `num_envs` and
        `message_dim` (map_id, rosters, winning_score, tick_limit, spawn_swap, shared_sight...)."""
        if render_mode is not None:
            raise ConfigError(f"render_mode: only None is supported, got {render_mode!r}")
        self.render_mode = render_mode
        self.native = game.native_env(mode, settings, "PettingZoo")
        self.mode = self.native.spec.id
        self.metadata = {**self.metadata, "name": "marl_bgs_" + self.mode.replace("-", "_")}
        num_actions = self.native.spec.num_actions
        self.possible_agents: list[str] = list(self.native.agents)
        self.agents: list[str] = []
        native_space = self.native.observation_space(self.possible_agents[0])
        low, high = np.asarray(native_space.low), np.asarray(native_space.high)
        # One space object per agent, so seeding one agent's space leaves the others alone.
        self._observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low=low, high=high, dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(num_actions,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self._action_spaces = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        self._key: jax.Array | None = None
        self._episode = 0
        self.game_state: Any = None
        self.last_facts: Any = None

    def observation_space(self, agent: str) -> spaces.Dict:
        """Dict(observation=Box, action_mask=Box(0, 1, (198,), int8)); the same object per call."""
        return self._observation_spaces[self._known(agent)]

    def action_space(self, agent: str) -> spaces.Discrete:
        """Discrete(198) flat actions; the same object per call."""
        return self._action_spaces[self._known(agent)]

    def _known(self, agent: str) -> str:
        if agent not in self._action_spaces:
            raise ConfigError(f"agent: expected one of {self.possible_agents}, got {agent!r}")
        return agent

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict]]:
        """Start a game: (observations, infos)."""
        del options  # none exist
        if seed is not None:
            self._key, self._episode = jax.random.PRNGKey(seed), 0
        elif self._key is None:
            fresh = int(np.random.SeedSequence().generate_state(1)[0])
            self._key, self._episode = jax.random.PRNGKey(fresh), 0
        else:
            self._episode += 1
        native = self.native
        state, obs, _, avail = game.reset_game(
            native.mode, self._key, native.pool, jnp.int32(self._episode), native.spawn_swap
        )
        self.game_state, self.last_facts = state, None
        self.agents = list(self.possible_agents)
        return self._observations(obs, avail), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """One tick: (observations, rewards, terminations, truncations, infos)."""
        if not self.agents or self.game_state is None:
            raise RuntimeError("step: no game is running; call reset() first")
        flat = self._flat(actions)
        no = jnp.bool_(False)
        native = self.native
        t = game.step_game(
            native.mode, native.reward_fn, self._key, self.game_state, flat, self.game_state, no,
            no, native.pool, native.spawn_swap,
        )  # fmt: skip
        self.game_state, self.last_facts = t.state, t.facts
        done, trunc = bool(t.done), bool(t.truncated)
        reward, obs, avail = t.reward, t.obs, t.avail
        agents = self.agents
        rewards = dict(zip(agents, np.asarray(reward).tolist(), strict=True))
        terminations = dict.fromkeys(agents, done and not trunc)
        truncations = dict.fromkeys(agents, trunc)
        observations = self._observations(obs, avail)
        infos: dict[str, dict] = {a: {} for a in agents}
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _flat(self, actions: dict[str, Any]) -> np.ndarray:
        unknown = sorted(set(actions) - set(self.possible_agents))
        missing = [a for a in self.agents if a not in actions]
        if unknown or missing:
            raise ConfigError(f"actions: unknown agent(s) {unknown}, missing agent(s) {missing}")
        out = np.zeros(len(self.possible_agents), np.int32)
        for i, agent in enumerate(self.possible_agents):
            value = np.asarray(actions[agent])
            ok = value.shape == () and np.issubdtype(value.dtype, np.integer)
            num_actions = self.native.spec.num_actions
            if not ok or not 0 <= int(value) < num_actions:
                raise ConfigError(
                    f"actions[{agent!r}]: expected an integer in [0, {num_actions}), got {value!r}"
                )
            out[i] = int(value)
        return out

    def _observations(self, obs: jax.Array, avail: jax.Array) -> dict[str, dict[str, np.ndarray]]:
        obs_np = np.asarray(obs)
        mask_np = np.asarray(avail).astype(np.int8)
        return {
            a: {"observation": obs_np[i], "action_mask": mask_np[i]}
            for i, a in enumerate(self.possible_agents)
        }

    def render(self) -> None:
        """No renderer yet (`render_mode` is None)."""
        return

    def close(self) -> None:
        """Drop the game; nothing else is held."""
        self.agents, self.game_state, self.last_facts = [], None, None
