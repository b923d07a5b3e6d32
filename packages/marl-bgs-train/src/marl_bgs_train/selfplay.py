"""What every baseline's training loop shares: the env with the learner's reward, team B's
players from the opponent mix (`marl_bgs_train.opponents`), a frozen teammate, the mode's
added input features, restarts, the update's counters and the compiled programs. A learner
subclasses `SelfPlay` and says how its network acts (`_network_actions`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from marl_bgs import ConfigError, Policy, StartPool, TeamInputs, team_inputs
from marl_bgs.core.team import act_team, restart_finished
from marl_bgs_train.hypers import LAYOUTS, Hyper, hyper_of, layout_shapes, program_config
from marl_bgs_train.losses import RewardScale
from marl_bgs_train.modes import parts
from marl_bgs_train.opponents import OpponentPlayers, Opponents, mix_of
from marl_bgs_train.policy import ActorSpec
from marl_bgs_train.programs import PROGRAMS, PROGRAMS_KEPT, distinct_buffers


class Played(NamedTuple):
    """One tick of every game, as team A's learner needs it (each [N, ...])."""

    env_state: Any  # the next tick's state (finished games restarted in place)
    opponents: Opponents  # finished games' next players drawn
    teammate: Any  # the frozen teammate's memory, fresh in restarted games
    reward: jax.Array  # [N, A] team A's rewards as the learner trains on them (`reward_norm`)
    paid: jax.Array  # [N, A] team A's rewards as paid (the env's and the mode's shaping)
    reward_scale: RewardScale  # the rewards' running statistics, this tick folded in
    done: jax.Array  # [N] the game ended this tick
    outcome: jax.Array  # [N] 0 running, 1 A won, 2 B won, 3 draw
    margin: jax.Array  # [N] A's margin at the end of a finished game (the mode's points)
    repaired: jax.Array  # [N] team A's actions the engine had to repair


class SelfPlay(OpponentPlayers):
    """The env and the opponent mix of a learner whose `config` has the shared settings
    (`mode`, `game`, `num_envs`, `gamma`, `opponents`, `sharing`, `input_scale`); what differs
    between modes comes from the mode's training parts (`marl_bgs_train.modes`).

    With a `mesh`, the games are split over its first axis's devices (data parallel): every
    per-game array (the games, memories, the rollout, each minibatch's sequences, a replay's
    rows) is laid out along it and the parameters are replicated, so XLA (GSPMD) runs each
    device's games there and averages the gradients and statistics across devices."""

    actor_spec: ActorSpec  # the learner's acting network (each learner sets it)

    def __init__(
        self, config: Any, frozen: Sequence[Policy], teammate: Policy | None,
        mesh: Mesh | None = None,
    ) -> None:  # fmt: skip
        self.parts = parts(config.mode)
        self.env = self.parts.build_env(config.game, config.num_envs, config.gamma, mesh)
        self.team_size = size = self.env.spec.team_size
        if hasattr(config, "minibatches"):
            self._check_split("minibatches", config.num_envs // config.minibatches, "games each")
        teams = len(self.env.spec.teams)
        if teams not in (1, 2):
            raise ConfigError(
                f"mode: {config.mode!r} has {teams} teams to control; these learners play one "
                "team against the env's own or two teams (self-play)"
            )
        self.self_play = teams == 2
        if not self.self_play and (frozen or teammate is not None or config.teammate_slots):
            raise ConfigError(
                f"mode: {config.mode!r} plays its second team itself; frozen opponents and "
                "teammates need a mode with two teams to control"
            )
        slots = config.teammate_slots
        if (
            any(not 0 <= k < size for k in slots)
            or len(set(slots)) != len(slots)
            or (len(slots) == size)
        ):
            raise ConfigError(
                f"teammate_slots: distinct slots of team A in 0-{size - 1}, not all {size}, "
                f"got {list(slots)}"
            )
        if bool(slots) != (teammate is not None):
            raise ConfigError(
                "teammate_slots: a frozen teammate needs its slots and slots need a teammate "
                f"(slots {list(slots)}, teammate {getattr(teammate, 'name', None)})"
            )
        self.teammate = teammate
        self.teammate_slots = jnp.asarray([k in slots for k in range(size)])
        self.fixed, self.fixed_weights, self.slices = mix_of(
            config.opponents, frozen, config.num_envs, self.self_play
        )
        self._config = config
        self.starts = self.parts.starts(self.env, config.game)
        own = None if self.starts.varies else self.starts.pool(self.starts.first())
        self.layouts: StartPool | None = (
            None if self.starts.varies else self.env.pool if own is None else own
        )  # the run's start pool, read as data (hyper "layouts") unless a curriculum moves it

    @property
    def devices(self) -> int:
        """How many devices the games are split over (1 without a mesh)."""
        sharding = self.env.sharding
        return 1 if sharding is None else sharding.mesh.shape[sharding.spec[0]]

    def _check_split(self, name: str, rows: int, what: str) -> None:
        """Refuse `rows` (a minibatch's games, a replay's sequences) that the mesh's devices
        cannot share evenly, naming the setting `name`."""
        if rows % self.devices:
            raise ConfigError(
                f"{name}: {rows} {what} do not split evenly over the {self.devices} devices of "
                f"the mesh; use a multiple of {self.devices}"
            )

    def split_games(self, tree: Any) -> Any:
        """`tree` with the leading axis of every leaf (a games axis, or a replay's or a
        minibatch's rows) laid out over the mesh's devices; as it is without a mesh. Works
        under `jit`."""
        sharding = self.env.sharding
        if sharding is None:
            return tree
        layout = NamedSharding(sharding.mesh, PartitionSpec(*sharding.spec))
        return jax.tree.map(lambda x: jax.lax.with_sharding_constraint(x, layout), tree)

    def _actor_spec(self, heads: str, q_values: bool = False) -> ActorSpec:
        """The learner's actor as a static description (`policy.ActorSpec`)."""
        cfg = self._config
        return ActorSpec(
            cfg.mode, cfg.game, self.team_size, cfg.hidden, cfg.recurrent, heads, cfg.sharing,
            cfg.input_scale, q_values,
        )  # fmt: skip

    def _teammate_memory(self, key: jax.Array) -> Any:
        """Fresh memories of the frozen teammate for every game (() without one)."""
        if self.teammate is None:
            return ()
        return jax.vmap(self.teammate.init)(jax.random.split(key, self._config.num_envs))

    def _with_teammate(
        self, actions: jax.Array, memory: Any, inputs: TeamInputs, key: jax.Array
    ) -> tuple[jax.Array, Any]:
        """Team A's actions with the frozen teammate's in its slots: (actions, its memory)."""
        if self.teammate is None:
            return actions, memory
        keys = jax.random.split(key, self._config.num_envs)
        acted, memory = act_team(self.env.spec, self.teammate, keys, memory, inputs)
        return jnp.where(self.teammate_slots[None, :, None], acted, actions), memory

    def _pool(self, starts: Any, hyper: Hyper) -> StartPool | None:
        """The pool new games start from now: the run's layouts (data), or the mode's `Starts`
        (a curriculum's stage, say)."""
        return hyper[LAYOUTS] if LAYOUTS in hyper else self.starts.pool(starts)

    def _fresh(self, key: jax.Array, actor: Any, hyper: Hyper | None) -> dict[str, Any]:
        """The fields every learner's state starts with: the first games (from the run's
        layouts, `hyper`'s, or the curriculum's first stage) and their team B players, `actor`
        as every saved copy, the run's key and counters."""
        hyper = self.hyper() if hyper is None else hyper
        k_env, k_opp, key = jax.random.split(key, 3)
        cfg = self._config
        first = self.starts.first()
        scale = RewardScale.create((cfg.num_envs, self.team_size))
        copies = jax.tree_util.tree_map(
            lambda p: jnp.broadcast_to(p, (cfg.opponents.num_copies, *p.shape)), actor
        )
        return {
            "actor": actor,
            "env_state": self.env.reset(k_env, self._pool(first, hyper))[1],
            "start": self.split_games(jnp.ones((cfg.num_envs,), bool)),
            "opponents": self.opponents_init(k_opp, cfg.hidden),
            "copies": copies,
            "copies_saved": jnp.int32(0),
            "curriculum": first,
            "teammate": self.split_games(self._teammate_memory(k_opp)),
            "features": self._empty_feature_memory(),
            "reward_scale": dataclasses.replace(scale, returns=self.split_games(scale.returns)),
            "key": jax.random.key_data(key),
            "update": jnp.int32(0),
            "steps": jnp.int32(0),
        }

    def _scale(self, x: jax.Array, memory: Any) -> jax.Array:
        """Observations (or global-state rows) [n, A, D] as the networks read them, with the
        mode's added features from the games' feature `memory` of that team."""
        return self.actor_spec.inputs(x, memory)

    def _empty_feature_memory(self) -> tuple[Any, Any]:
        """Each team's feature memory for every game before any is worked out (team B's
        empty where the env plays it)."""
        one = self.actor_spec.feature_memory()
        n = self._config.num_envs
        every = self.split_games(jax.tree.map(lambda a: jnp.broadcast_to(a, (n, *a.shape)), one))
        return every, every if self.self_play else ()

    def _feature_memory(
        self, state: Any, inputs_a: TeamInputs, inputs_b: TeamInputs | None
    ) -> tuple[Any, Any]:
        """Each team's feature memory with the games that start this tick worked out (team B's
        only in the games a network plays it: the fixed policies read none)."""
        memory_a, memory_b = state.features
        memory_a = self.actor_spec.remember(memory_a, state.start, inputs_a.obs)
        if inputs_b is not None:
            networks = jnp.arange(state.start.shape[0]) < self.slices[0] + self.slices[1]
            memory_b = self.actor_spec.remember(memory_b, state.start & networks, inputs_b.obs)
        return memory_a, memory_b

    @property
    def input_size(self) -> int:
        """The width of a network's input: the observation and the mode's added features."""
        return self.env.obs_size + self.parts.feature_width(self._config.game)

    def _network_actions(
        self, params: Any, carry: jax.Array, inputs: TeamInputs, start: jax.Array,
        key: jax.Array, per_game: bool, features: Any,
    ) -> tuple[jax.Array, jax.Array]:  # fmt: skip
        """A learner's network for one team of some games: (memory [n, A, H], actions
        [n, A, heads]); `per_game`: `params` has a leading game axis; `features` the games'
        feature memory."""
        raise NotImplementedError

    def _weight(self, inputs: TeamInputs) -> jax.Array:
        """1 for each of team A's slots the learner plays [n, A]: a real roster slot that no
        frozen teammate plays."""
        return ((self.parts.slots(inputs) > 0) & ~self.teammate_slots).astype(jnp.float32)

    def _groups(self, inputs: TeamInputs) -> jax.Array:
        """Each own agent's parameter group [n, A]."""
        return self.actor_spec.groups(inputs)

    def _inputs(self, env_state: Any) -> tuple[TeamInputs, TeamInputs | None]:
        """Team A's permitted inputs, and team B's (None where the env plays team B)."""
        teams = team_inputs(self.env, env_state)
        return teams[0], teams[1] if self.self_play else None

    def _play(
        self, state: Any, a_actions: jax.Array, b_actions: jax.Array, opponents: Opponents,
        teammate: Any, key: jax.Array, k_fresh: jax.Array, hyper: Hyper,
    ) -> Played:  # fmt: skip
        """Both teams' actions applied to every game of `state` (its games, saved copies, start
        state and reward scale); the reward is the env's plus the mode's shaping weighted by
        `hyper`; finished games restart (from the run's layouts in `hyper`, or the mode's
        `Starts`: a curriculum's current stage, say) with new players and a fresh teammate
        memory (`k_fresh`). With `reward_norm`, team A's rewards come standardised."""
        k_step, k_reset, k_draw = jax.random.split(key, 3)
        actions = jnp.concatenate([a_actions, b_actions], axis=1)
        _, ended, reward, done, info = self.env.step(k_step, state.env_state, actions)
        finished = done["__all__"]
        margin, repaired = self.parts.game_end(ended, info)
        paid = self.env.stack(reward)
        shaper = self.parts.shaping(self._config.game, hyper, self._config.gamma)
        if shaper is not None:
            paid = paid + jax.vmap(shaper)(state.env_state, ended, info["facts"])
        env_state, teammate = restart_finished(
            self.env, k_reset, ended, teammate, self._teammate_memory(k_fresh),
            self._pool(state.curriculum, hyper),
        )  # fmt: skip
        own = self.env.spec.team_slice(paid, 0)
        norm = self._config.reward_norm
        scale = (
            state.reward_scale.update(own, finished[:, None], self._config.gamma)
            if norm
            else state.reward_scale  # kept as it is: nothing reads it
        )
        return Played(
            env_state=env_state,
            opponents=self._redraw(opponents, finished, state.copies_saved, k_draw),
            teammate=teammate,
            reward=scale.scale(own) if norm else own,
            paid=own,
            reward_scale=scale,
            done=finished,
            outcome=jnp.where(finished, self.parts.result(info["outcome"]), 0),
            margin=jnp.where(finished, margin, 0),
            repaired=repaired,
        )

    def _game_metrics(self, traj: Any, starts: Any, steps: jax.Array) -> dict[str, jax.Array]:
        """Counts over one update's finished games, from a time-major trajectory with `done`,
        `outcome`, `margin`, `opponent`, `paid`, `weight` and `repaired`; the stage of the
        mode's `Starts` (a curriculum's) the update played in. `reward_per_tick` is the reward
        the env paid (before `reward_norm`), per played agent tick."""
        done = traj.done
        total = lambda m: jnp.sum(done & m)  # noqa: E731
        scripted_kind = 1 + len(self.fixed) - len(self._config.opponents.scripted_teams)
        vs_scripted = traj.opponent >= scripted_kind
        weight = traj.weight
        return {
            "steps": steps,
            "games": jnp.sum(done),
            "wins": total(traj.outcome == 1),
            "draws": total(traj.outcome == 3),
            "losses": total(traj.outcome == 2),
            "margin_sum": jnp.sum(jnp.where(done, traj.margin, 0)),
            "scripted_games": total(vs_scripted),
            "scripted_wins": total(vs_scripted & (traj.outcome == 1)),
            "repaired_actions": jnp.sum(traj.repaired),
            "reward_per_tick": jnp.sum(traj.paid) / jnp.maximum(jnp.sum(weight), 1),
            "stage": self.starts.stage(starts),
        }

    def _record(self, state: Any, inputs_a: TeamInputs, played: Played) -> dict[str, jax.Array]:
        """What every learner's transition keeps of a tick besides its own: team A's rewards
        (as trained on, and the env's paid to its played slots, summed per game), the games'
        ends and results, its agents' groups and real slots, who played team B."""
        weight = self._weight(inputs_a)
        return {
            "reward": played.reward,
            "paid": jnp.sum(played.paid * weight, axis=-1),
            "done": played.done,
            "start": state.start,
            "group": self._groups(inputs_a),
            "weight": weight,
            "outcome": played.outcome,
            "margin": played.margin,
            "opponent": state.opponents.kind,
            "repaired": played.repaired,
        }

    def _rollout(self, state: Any, hyper: Hyper) -> tuple[Any, Any, jax.Array, jax.Array]:
        """`rollout` ticks of every game from the run's key: (state, trajectory time-major, the
        key the update goes on with, a key for its learning)."""
        key = jax.random.wrap_key_data(state.key)
        key, k_roll, k_learn = jax.random.split(key, 3)
        keys = jax.random.split(k_roll, self._config.rollout)
        with jax.named_scope("rollout"):  # the phases' names in profiles (train_trace.py)
            state, traj = jax.lax.scan(lambda s, k: self._tick(s, k, hyper), state, keys)
        return state, traj, key, k_learn

    def _tick(self, state: Any, key: jax.Array, hyper: Hyper) -> tuple[Any, Any]:
        """One tick of every game (each learner's own)."""
        raise NotImplementedError

    def _epochs(
        self, carry: Any, batch: Any, step: Callable[[Any, Any], tuple[Any, Any]],
        key: jax.Array, epochs: int, minibatches: int,
    ) -> tuple[Any, Any]:  # fmt: skip
        """`epochs` passes over game-major `batch` [N, ...] in `minibatches` random splits of
        whole games, `step(carry, minibatch) -> (carry, stats)` on each: (carry, stats). Each
        minibatch's games are gathered when it is learned from (no shuffled copy of the whole
        batch per epoch)."""
        n = self._config.num_envs

        def learn(carry: Any, games: jax.Array) -> tuple[Any, Any]:
            return step(carry, self.split_games(jax.tree.map(lambda a: a[games], batch)))

        def epoch(carry: Any, k: jax.Array) -> tuple[Any, Any]:
            order = jax.random.permutation(k, n).reshape(minibatches, n // minibatches)
            return jax.lax.scan(learn, carry, order)

        with jax.named_scope("learning"):
            return jax.lax.scan(epoch, carry, jax.random.split(key, epochs))

    def _finish(
        self, state: Any, traj: Any, key: jax.Array, actor: Any, **learned: Any
    ) -> tuple[Any, dict[str, jax.Array]]:
        """What every update ends with: the game steps, a saved copy of `actor` when due, the
        game metrics, the curriculum's next stage, the key and the counters; `learned` holds the
        learner's other new fields. Returns (state, game metrics)."""
        steps = state.steps + self._config.steps_per_update
        copies, copies_saved = self._save_copy(
            state.copies, state.copies_saved, actor, state.steps, steps
        )
        games = self._game_metrics(traj, state.curriculum, steps)
        state = dataclasses.replace(
            state,
            **learned,
            actor=actor,
            copies=copies,
            copies_saved=copies_saved,
            curriculum=self.starts.advance(state.curriculum, steps, games),
            key=jax.random.key_data(key),
            update=state.update + 1,
            steps=steps,
        )
        return state, games

    # ------------------------------------------------------------------------ the run
    def update(self, state: Any, hyper: Hyper | None = None) -> tuple[Any, dict[str, jax.Array]]:
        """One update of the learner: (state, its metrics)."""
        raise NotImplementedError

    def init(self, key: jax.Array, hyper: Hyper | None = None) -> Any:
        """A fresh run's state (its first games from `hyper`'s layouts, default the run's)."""
        raise NotImplementedError

    def _players(self) -> tuple[Policy, ...]:
        """The fixed policies this trainer's programs call (opponents, then the teammate)."""
        return (*self.fixed, *([self.teammate] if self.teammate is not None else []))

    def program_key(self) -> tuple[Any, ...]:
        """What this trainer's compiled programs depend on: its kind, its program config, the
        shapes of its layouts and its fixed players (not its data settings)."""
        players = tuple(id(p) for p in self._players())
        layout = (program_config(self._config), layout_shapes(self.layouts), self.env.sharding)
        return (type(self), *layout, players)

    def _program(self, what: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        """The compiled function `what` of this trainer, built once for every trainer with the
        same `program_key` (`PROGRAMS`): it must take the run's data settings as an argument
        (`hyper`), never read them from `self`, since another run's trainer may call it."""
        key = (*self.program_key(), *what)
        if key not in PROGRAMS:
            if len(PROGRAMS) >= PROGRAMS_KEPT:
                PROGRAMS.pop(next(iter(PROGRAMS)))
            PROGRAMS[key] = build()
        return PROGRAMS[key]

    def _updates(self, num_updates: int) -> Callable[[Any, Hyper], tuple[Any, dict]]:
        """`num_updates` updates as one scan, the sweepable settings as data."""
        return lambda state, hyper: jax.lax.scan(
            lambda s, _: self.update(s, hyper), state, None, length=num_updates
        )

    def hyper(self) -> Hyper:
        """The run's settings read as data (what `run` uses unless given others): the config's
        (`hypers.hyper_of`) and its layouts, the start pool (unless a curriculum moves it)."""
        data = hyper_of(self._config)
        return data if self.layouts is None else data | {LAYOUTS: self.layouts}

    def run(
        self, state: Any, num_updates: int, hyper: Hyper | None = None
    ) -> tuple[Any, dict[str, jax.Array]]:
        """`num_updates` more updates from `state`: (state, metrics stacked per update);
        `hyper` defaults to the run's own (`hyper`). `state` is consumed: its buffers are
        donated to the new state (a replay is updated in place, not copied), so keep a copy
        (`jax.tree.map(jnp.copy, state)`) to use it again."""
        build = lambda: jax.jit(self._updates(num_updates), donate_argnums=0)  # noqa: E731
        program = self._program(("run", num_updates), build)
        return program(distinct_buffers(state), self.hyper() if hyper is None else hyper)

    def state_layout(self) -> Any:
        """A fresh state's shapes (`jax.ShapeDtypeStruct`s), each with its layout over the
        mesh's devices when there is a mesh: a target to restore a checkpoint into."""
        init = self._program(("init",), lambda: jax.jit(self.init))
        key = jax.random.key(0)
        shapes = jax.eval_shape(init, key)
        if self.env.sharding is None:
            return shapes
        layouts = init.lower(key).compile().output_shardings
        return jax.tree.map(
            lambda s, layout: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=layout),
            shapes, layouts,
        )  # fmt: skip

    def init_many(self, keys: jax.Array, hypers: Hyper) -> Any:
        """Fresh states of many runs, stacked on a leading run axis ([R] keys and `hypers`)."""
        return self._program(("init_many",), lambda: jax.jit(jax.vmap(self.init)))(keys, hypers)

    def run_many(
        self, states: Any, num_updates: int, hypers: Hyper
    ) -> tuple[Any, dict[str, jax.Array]]:
        """`run` for a batch of runs in one program (`vmap` over the leading run axis of
        `states` and `hypers`): (states, metrics [R, updates]); `states` is consumed, as in
        `run`."""
        build = lambda: jax.jit(jax.vmap(self._updates(num_updates)), donate_argnums=0)  # noqa: E731
        return self._program(("run_many", num_updates), build)(distinct_buffers(states), hypers)

    def __call__(self, key: jax.Array) -> tuple[Any, dict]:
        """The whole configured run from `key` (purejaxrl's `train(key)`)."""
        hyper = self.hyper()  # given, not read inside: the program is shared (`program_key`)
        state = self._program(("init",), lambda: jax.jit(self.init))(key, hyper)
        return self.run(state, self._config.num_updates, hyper)
