"""Any registered mode as a JaxMARL `MultiAgentEnv`: one game, vmapped outside as JaxMARL users do.

    import jax
    from marl_bgs.adapters.jaxmarl import JaxMARLEnv
    env = JaxMARLEnv("tdm", map_id=0)                          # any `marl_bgs.make` keyword
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    obs, state = jax.vmap(env.reset)(keys)                      # {agent: [8, obs_size], ...}
    actions = {a: jax.numpy.zeros(8, int) for a in env.agents}  # flat indices
    obs, state, reward, done, info = jax.vmap(env.step)(keys, state, actions)

What JaxMARL's own baselines read is here: `agents`, `num_agents`, `observation_space(a).shape`,
`action_space(a).n`, `get_avail_actions(state)` {agent: bool [num_actions]} (exact), and for
critics `obs["world_state"]` (one vector per game, `state_size` long: the global state of each
team's first slot, every unit visible) with `num_allies` (= `num_agents`: every listed agent is
trained, both teams, as in self-play with shared parameters). So `ippo_rnn_smax.py` and
`mappo_rnn_smax.py` run unmodified but for the line that builds the env.

The state is the mode's state (Team Deathmatch: `GameState`). Actions are flat indices in each
agent's own frame; illegal ones get the mode's documented repair. `step` keeps
`MultiAgentEnv.step`'s contract: it steps (`step_env`) and, where `done["__all__"]`, returns a start
state instead: `reset_state` when given, else the game's next episode drawn from
`jax.random.split(key)[1]` exactly as the native `reset_done` draws it. `info` holds one value per
agent, so baselines can reshape it: `outcome` (1 A wins, 2 B wins, 3 draw, 0 running) and
`truncated` (ended by the clock). `facts="agent"` adds per-agent fact summaries (the mode's
`agent_facts`, one value per agent); `facts="full"` adds the whole `Facts` (not per agent: fine
for your own loops, but it breaks baselines that reshape `info` to one value per agent).

`JaxMARLTeamEnv` is the env JaxMARL's value-decomposition baselines (QMIX, VDN, IQL through
`CTRolloutManager`) expect: one team learns, the other is played by a JAX team policy folded into
the env, as SMAX's heuristic enemies are:

    from jaxmarl.wrappers.baselines import CTRolloutManager
    env = JaxMARLTeamEnv("tdm", opponent=scripted_policy("tdm-alpha"), map_id=0)  # team A
    wrapped = CTRolloutManager(env, batch_size=16)

`CTRolloutManager` decides how to read an env by its name: an env named like SMAX gives the
global state as `obs["world_state"]`, the team reward as the first agent's reward and the legal
actions through `get_avail_actions`; any other name gets all-ones masks, every agent's
observation concatenated and the sum of every agent's reward. This env provides the first
reading (team A's `world_state`, the team's reward given to each of its agents, exact masks), so
its `name` carries `SMAX` for that wrapper to choose it.

The engine calls are jitted once per module (`marl_bgs.adapters.game`, shared with the PettingZoo
adapter) with the settings as traced data, so adapters for other maps, rosters or rule values
reuse the compiled programs; under a user's `jax.jit` / `jax.vmap` they trace into one program.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxmarl.environments.multi_agent_env import MultiAgentEnv
from jaxmarl.environments.spaces import Box, Discrete

from marl_bgs.adapters import game
from marl_bgs.core.checks import shown
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.pool import StartPool
from marl_bgs.core.pytree import PyTree, pytree_dataclass, where_games
from marl_bgs.core.team import Policy, TeamInputs, act_team

FACTS = (None, "agent", "full")
_OPPONENT_ACT, _OPPONENT_MEMORY = 1, 2  # fold-in tags of the opponent's keys (the game's: split)


class JaxMARLEnv(MultiAgentEnv):
    """One game of a registered mode behind JaxMARL's `MultiAgentEnv` interface."""

    def __init__(self, mode: str, *, facts: str | None = None, **settings: Any) -> None:
        """`settings`: the keywords of `marl_bgs.make(mode, ...)` except `num_envs` and
        `message_dim` (map_id, rosters, winning_score, tick_limit, spawn_swap, reward_fn...)."""
        if facts is not None and (not isinstance(facts, str) or facts not in FACTS):
            raise ConfigError(f"facts: expected one of {list(FACTS)}, got {shown(facts)}")
        self.native = game.native_env(mode, settings, "JaxMARL")
        spec = self.native.spec
        super().__init__(num_agents=spec.num_agents)
        self.mode = spec.id
        self.agents = list(spec.agents)
        self.facts = facts
        self.num_allies = spec.num_agents
        self.num_enemies = 0
        self.state_size = len(spec.teams) * spec.state_size
        space = self.native.observation_space(self.agents[0])
        obs_space = Box(
            low=np.asarray(space.low), high=np.asarray(space.high), shape=space.shape,
            dtype=jnp.float32,
        )  # fmt: skip
        self.observation_spaces = dict.fromkeys(self.agents, obs_space)
        self.action_spaces = dict.fromkeys(self.agents, Discrete(spec.num_actions))

    @property
    def pool(self) -> StartPool:
        """What starts are drawn from (maps, rosters, rule values): traced data."""
        return self.native.pool

    @property
    def agent_classes(self) -> dict[str, list[str]]:
        """The teams, by their agents."""
        return {
            f"team_{'ab'[t]}": [self.agents[i] for i in team]
            for t, team in enumerate(self.native.spec.teams)
        }

    def _obs(self, obs: jax.Array, world: jax.Array) -> dict[str, jax.Array]:
        return {a: obs[i] for i, a in enumerate(self.agents)} | {"world_state": world}

    def _flat(self, actions: dict[str, Any]) -> jax.Array:
        unknown = sorted(str(a) for a in actions if a not in self.agents)
        missing = [a for a in self.agents if a not in actions]
        if unknown or missing:
            raise ConfigError(f"actions: unknown agent(s) {unknown}, missing agent(s) {missing}")
        return jnp.stack([jnp.asarray(actions[a], jnp.int32).reshape(()) for a in self.agents])

    # MultiAgentEnv wraps reset/step/get_avail_actions in jax.jit; ours are plain methods whose
    # engine calls are jitted once per module (see the module docstring).
    def reset(self, key: jax.Array) -> tuple[dict[str, jax.Array], Any]:  # pyright: ignore[reportIncompatibleVariableOverride]
        """A new game (episode 0 of game 0, as the native env's `reset` draws it): (obs, state)."""
        native = self.native
        state, obs, world, _ = game.reset_game(
            native.mode, key, native.pool, jnp.int32(0), native.spawn_swap
        )
        return self._obs(obs, world), state

    def get_obs(self, state: Any) -> dict[str, jax.Array]:
        """Each agent's flat observation {agent: [obs_size]} and `world_state` [state_size]."""
        mode = self.native.mode
        return self._obs(mode.observe(state), game.world_state(mode, state))

    def get_avail_actions(self, state: Any) -> dict[str, jax.Array]:  # pyright: ignore[reportIncompatibleVariableOverride]
        """Legal flat actions {agent: bool [num_actions]} (exact)."""
        flat = self.native.mode.masks(state).flat
        return {a: flat[i] for i, a in enumerate(self.agents)}

    def step_env(
        self, key: jax.Array, state: Any, actions: dict[str, Any]
    ) -> tuple[dict, Any, dict, dict, dict]:
        """One tick without auto-reset: (obs, state, reward, dones, info)."""
        return self._tick(key, state, actions, None, auto_reset=False)

    def step(  # pyright: ignore[reportIncompatibleVariableOverride]
        self,
        key: jax.Array,
        state: Any,
        actions: dict[str, Any],
        reset_state: Any | None = None,
    ) -> tuple[dict, Any, dict, dict, dict]:
        """One tick, then the start state where the game ended: (obs, state, reward, dones, info).

        As `MultiAgentEnv.step`: `reset_state` when given, else a fresh start (here the game's
        next episode, drawn from `jax.random.split(key)[1]` as the native `reset_done` draws it).
        """
        return self._tick(key, state, actions, reset_state, auto_reset=True)

    def _tick(
        self,
        key: jax.Array,
        state: Any,
        actions: dict[str, Any],
        reset_state: Any,
        auto_reset: bool,
    ) -> tuple[dict, Any, dict, dict, dict]:
        native, given = self.native, reset_state is not None
        t = game.step_game(
            native.mode, native.reward_fn, key, state, self._flat(actions),
            reset_state if given else state, jnp.bool_(given), jnp.bool_(auto_reset), native.pool,
            native.spawn_swap,
        )  # fmt: skip
        n = len(self.agents)
        info: dict[str, Any] = {
            "outcome": jnp.full((n,), t.outcome),
            "truncated": jnp.full((n,), t.truncated),
        }
        if self.facts == "agent":
            info["agent_facts"] = native.mode.agent_facts(t.facts)
        elif self.facts == "full":
            info["facts"] = t.facts
        rewards = {a: t.reward[i] for i, a in enumerate(self.agents)}
        dones = dict.fromkeys(self.agents, t.done) | {"__all__": t.done}
        return self._obs(t.obs, t.world_state), t.state, rewards, dones, info


@pytree_dataclass
class TeamState(PyTree):
    """One game and the folded-in opponent's memory (one game's, no batch axis)."""

    game: Any
    memory: Any


@partial(jax.jit, static_argnames=("mode", "opponent"))
def _opponent_actions(
    mode: Any, opponent: Policy, key: jax.Array, state: Any, memory: Any
) -> tuple[jax.Array, Any]:
    """Team B's flat actions [team_size] from its own inputs of one game, and its memory."""
    one = lambda tree: jax.tree.map(lambda a: a[None], tree)  # noqa: E731  # a batch of one
    faces = one((mode.observe(state), mode.views(state), mode.masks(state)))
    inputs = TeamInputs(*mode.spec.team_slice(faces, 1))
    actions, memory = act_team(mode.spec, opponent, key[None], one(memory), inputs)
    return mode.flatten_actions(actions[0]), jax.tree.map(lambda a: a[0], memory)


class JaxMARLTeamEnv(JaxMARLEnv):
    """Team A of a registered mode behind JaxMARL's `MultiAgentEnv`, team B played by `opponent`
    inside the env (a two-team mode) or by the env's own rules (a one-team mode such as
    Two-Bridge). Read the way `CTRolloutManager` reads SMAX (see the module docstring)."""

    def __init__(
        self,
        mode: str,
        *,
        opponent: Policy | None = None,
        facts: str | None = None,
        **settings: Any,
    ) -> None:
        """`opponent`: team B's JAX team `Policy` (a scripted team, say:
        `marl_bgs.scripted_policy("tdm-alpha")`); none for a mode whose env plays team B.
        `settings`: as `JaxMARLEnv`."""
        super().__init__(mode, facts=facts, **settings)
        spec = self.native.spec
        if len(spec.teams) == 2 and opponent is None:
            raise ConfigError(
                f"opponent: {spec.id} has two teams to control; give team B's player, a Policy "
                "(e.g. marl_bgs.scripted_policy('tdm-alpha'))"
            )
        if len(spec.teams) == 1 and opponent is not None:
            raise ConfigError(f"opponent: {spec.id} plays its second team itself; give none")
        if opponent is not None and not isinstance(opponent, Policy):
            raise ConfigError(
                f"opponent: expected a Policy (e.g. marl_bgs.scripted_policy('tdm-alpha')), got "
                f"{shown(opponent)}"
            )
        self.opponent = opponent
        self.own = np.asarray(spec.teams[0])
        everyone = self.agents
        self.agents = [everyone[i] for i in spec.teams[0]]
        self.num_agents = self.num_allies = len(self.agents)
        self.num_enemies = spec.num_agents - len(self.agents)
        self.state_size = spec.state_size
        self.observation_spaces = {a: self.observation_spaces[a] for a in self.agents}
        self.action_spaces = {a: self.action_spaces[a] for a in self.agents}

    @property
    def name(self) -> str:
        """Carries `SMAX` so that `CTRolloutManager` reads this env as it reads SMAX."""
        player = "env" if self.opponent is None else self.opponent.name
        return f"MarlBgsSMAXProtocol-{self.mode}-vs-{player}"

    @property
    def agent_classes(self) -> dict[str, list[str]]:
        """The learning team, by its agents."""
        return {"team_a": list(self.agents)}

    def _team_obs(self, obs: jax.Array, world: jax.Array) -> dict[str, jax.Array]:
        return self._obs(obs[self.own], world[: self.state_size])

    def _memory(self, key: jax.Array) -> Any:
        if self.opponent is None:
            return ()
        return self.opponent.init(jax.random.fold_in(key, _OPPONENT_MEMORY))

    def reset(self, key: jax.Array) -> tuple[dict[str, jax.Array], TeamState]:  # pyright: ignore[reportIncompatibleMethodOverride]
        """A new game and a fresh opponent memory: (obs of team A and `world_state`, state)."""
        obs, game_state = super().reset(key)
        world = obs.pop("world_state")
        state = TeamState(game=game_state, memory=self._memory(key))
        return {a: obs[a] for a in self.agents} | {"world_state": world[: self.state_size]}, state

    def get_obs(self, state: TeamState) -> dict[str, jax.Array]:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Team A's flat observations and its `world_state` [state_size]."""
        mode = self.native.mode
        return self._team_obs(mode.observe(state.game), game.world_state(mode, state.game))

    def get_avail_actions(self, state: TeamState) -> dict[str, jax.Array]:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Team A's legal flat actions {agent: bool [num_actions]} (exact)."""
        flat = self.native.mode.masks(state.game).flat
        return {a: flat[i] for a, i in zip(self.agents, self.own, strict=True)}

    def _tick(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, key: jax.Array, state: TeamState, actions: dict[str, Any], reset_state: Any,
        auto_reset: bool,
    ) -> tuple[dict, TeamState, dict, dict, dict]:  # fmt: skip
        """Team B acts from its own inputs, then the game ticks (and restarts where it ended,
        with a fresh opponent memory); team A's reward is the mean of its agents' rewards."""
        native, spec, given = self.native, self.native.spec, reset_state is not None
        flat = jnp.zeros((spec.num_agents,), jnp.int32).at[self.own].set(self._flat(actions))
        memory = state.memory
        if self.opponent is not None:
            k_act = jax.random.fold_in(key, _OPPONENT_ACT)
            theirs, memory = _opponent_actions(
                native.mode, self.opponent, k_act, state.game, state.memory
            )
            flat = flat.at[np.asarray(spec.teams[1])].set(theirs)
        t = game.step_game(
            native.mode, native.reward_fn, key, state.game, flat,
            reset_state.game if given else state.game, jnp.bool_(given), jnp.bool_(auto_reset),
            native.pool, native.spawn_swap,
        )  # fmt: skip
        fresh = reset_state.memory if given else self._memory(key)
        restarted = t.done & auto_reset
        memory = where_games(restarted, fresh, memory) if self.opponent is not None else memory
        n = len(self.agents)
        info: dict[str, Any] = {
            "outcome": jnp.full((n,), t.outcome),
            "truncated": jnp.full((n,), t.truncated),
        }
        if self.facts == "agent":
            summed = native.mode.agent_facts(t.facts)
            info["agent_facts"] = jax.tree.map(lambda v: v[self.own], summed)
        elif self.facts == "full":
            info["facts"] = t.facts
        team_reward = jnp.mean(t.reward[self.own])
        rewards = dict.fromkeys(self.agents, team_reward)
        dones = dict.fromkeys(self.agents, t.done) | {"__all__": t.done}
        nxt = TeamState(game=t.state, memory=memory)
        return self._team_obs(t.obs, t.world_state), nxt, rewards, dones, info
