"""An opponent folded into the env: one team learns through plain `reset`/`step`, the other team is
played by any JAX team policy (scripted, frozen or random), whose memory rides in the env state.

    env = OpponentEnv(marl_bgs.make("tdm", num_envs=64), opponent, team=0)
    obs, state = env.reset(key)                 # obs of team 0's agents only
    obs, state, reward, done, info = env.step(key, state, actions)
    obs, state = env.reset_done(key, state)     # restarts games and the opponent's memory

The opponent reads only its own team's inputs; its keys are folded from the step key per game.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from marl_bgs.core.env import BatchedEnv
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.inputs import check_actions
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.core.spaces import Box, Discrete, MultiDiscrete
from marl_bgs.core.team import TeamPolicy, act_team, restart_finished, team_inputs

_OPPONENT_MEMORY = 1  # fold-in tags of the keys the env derives for the opponent
_OPPONENT_ACT = 2


@pytree_dataclass
class OpponentState(PyTree):
    """The batched game and the opponent's memory [num_envs, ...]."""

    game: Any
    memory: Any


def _game_keys(key: jax.Array, use: int, n: int) -> jax.Array:
    base = jax.random.fold_in(key, use)
    return jax.vmap(lambda g: jax.random.fold_in(base, g))(jnp.arange(n))


@partial(jax.jit, static_argnums=(0, 1))
def _shared_act(spec: Any, opponent: TeamPolicy, keys: jax.Array, memory: Any, inputs: Any) -> Any:
    return act_team(spec, opponent, keys, memory, inputs)


def _compiled_act(spec: Any, opponent: TeamPolicy) -> Callable[..., Any]:
    """The opponent's `act_team` under `jit`: one program per spec and policy object, shared by
    every env (an unhashable policy gets its own). Called eagerly, a policy would run op by op,
    and a scripted team's loops were compiled anew on every step."""
    try:
        hash(opponent)
    except TypeError:
        return jax.jit(partial(act_team, spec, opponent))
    return partial(_shared_act, spec, opponent)


class OpponentEnv:
    """A single-team view of a `BatchedEnv`: team `team` is yours, the rest play `opponent`."""

    def __init__(self, env: BatchedEnv, opponent: TeamPolicy, team: int = 0) -> None:
        if len(env.spec.teams) != 2:
            raise ConfigError("env: an opponent env needs a two-team mode")
        if team not in (0, 1):
            raise ConfigError(f"team: expected 0 or 1, got {team!r}")
        if not (
            callable(getattr(opponent, "act", None)) and callable(getattr(opponent, "init", None))
        ):
            raise ConfigError(
                f"opponent: expected a team policy with act(keys, memory, inputs) and init(key),"
                f" got {type(opponent).__name__}"
            )
        self.env, self.opponent, self.team = env, opponent, team
        self._act = _compiled_act(env.spec, opponent)
        self.spec = env.spec
        self.agents = tuple(env.agents[i] for i in env.spec.teams[team])
        self.num_envs = env.num_envs

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    def observation_space(self, agent: str) -> Box:
        self._check_agent(agent)
        return self.env.observation_space(agent)

    def action_space(self, agent: str) -> MultiDiscrete:
        self._check_agent(agent)
        return self.env.action_space(agent)

    def flat_action_space(self, agent: str) -> Discrete:
        self._check_agent(agent)
        return self.env.flat_action_space(agent)

    def _check_agent(self, agent: str) -> None:
        if agent not in self.agents:
            raise ConfigError(f"agent: expected one of {list(self.agents)}, got {agent!r}")

    def _mine(self, tree: Any) -> Any:
        return self.spec.team_slice(tree, self.team)

    def _to_dict(self, stacked: jax.Array) -> dict[str, jax.Array]:
        return {a: stacked[:, i] for i, a in enumerate(self.agents)}

    def _fresh_memory(self, key: jax.Array) -> Any:
        keys = _game_keys(key, _OPPONENT_MEMORY, self.num_envs)
        return jax.vmap(self.opponent.init)(keys)

    def get_obs(self, state: OpponentState) -> dict[str, jax.Array]:
        """Your agents' flat observations {agent: [num_envs, obs_size]}."""
        obs = self.env.get_obs(state.game)  # built per agent: no slicing copies
        return {a: obs[a] for a in self.agents}

    def reset(self, key: jax.Array) -> tuple[dict[str, jax.Array], OpponentState]:
        """Start every game and the opponent's memory: (obs, state)."""
        k_game, k_mem = jax.random.split(key)
        _, game = self.env.reset(k_game)
        state = OpponentState(game=game, memory=self._fresh_memory(k_mem))
        return self.get_obs(state), state

    def step(
        self, key: jax.Array, state: OpponentState, actions: Any
    ) -> tuple[dict, OpponentState, dict, dict, dict]:
        """Your team's actions ({agent: ...} or [num_envs, team_size, heads]); the opponent acts
        from its own inputs; (obs, state, reward, done, info) for your agents."""
        mine = self._own_actions(actions)
        other = 1 - self.team
        inputs = team_inputs(self.env, state.game)
        keys = _game_keys(key, _OPPONENT_ACT, self.num_envs)
        theirs, memory = self._act(keys, state.memory, inputs[other])
        parts = [mine, theirs] if self.team == 0 else [theirs, mine]
        _, game, reward, done, info = self.env.step(key, state.game, jnp.concatenate(parts, 1))
        nxt = OpponentState(game=game, memory=memory)
        rewards = {a: reward[a] for a in self.agents}
        dones = {a: done[a] for a in self.agents} | {"__all__": done["__all__"]}
        return self.get_obs(nxt), nxt, rewards, dones, info

    def _own_actions(self, actions: Any) -> jax.Array:
        spec = self.spec.team_spec(self.team)
        return check_actions(spec, self.num_envs, actions, self.env.mode.unflatten_actions)

    def reset_done(self, key: jax.Array, state: OpponentState) -> tuple[dict, OpponentState]:
        """Restart finished games and, in them, the opponent's memory: (obs, state)."""
        k_game, k_mem = jax.random.split(key)
        game, memory = restart_finished(
            self.env, k_game, state.game, state.memory, self._fresh_memory(k_mem)
        )
        nxt = OpponentState(game=game, memory=memory)
        return self.get_obs(nxt), nxt

    def action_masks(self, state: OpponentState) -> Any:
        """Your agents' exact masks [num_envs, team_size, ...]."""
        return self._mine(self.env.action_masks(state.game))

    def get_avail_actions(self, state: OpponentState) -> dict[str, jax.Array]:
        """Your agents' legal flat actions {agent: bool [num_envs, num_actions]}."""
        return self._to_dict(self.action_masks(state).flat)

    def global_state(self, state: OpponentState) -> jax.Array:
        """Critic-only state of your agents [num_envs, team_size, state_size]."""
        return self._mine(self.env.global_state(state.game))

    def sample_actions(self, key: jax.Array, state: OpponentState) -> dict[str, jax.Array]:
        """Uniform random legal actions for your agents {agent: [num_envs, heads]}."""
        keys = jax.vmap(lambda g: jax.random.fold_in(key, g))(jnp.arange(self.num_envs))
        sampled = jax.vmap(self.env.mode.sample_legal)(keys, self.action_masks(state))
        return self._to_dict(sampled)
