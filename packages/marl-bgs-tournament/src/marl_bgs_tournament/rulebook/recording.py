"""What the checks share: the test maps' envs and starts, the compiled loop of a System against
random, the compiled `act`, the recording of random against random, the one place the checks read
a team's inputs (`_team_inputs`), host copies and comparisons of batched trees, and the checks'
argument checks."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import marl_bgs
from marl_bgs import GameState, TeamInputs, team_inputs
from marl_bgs_eval import System, random_system
from marl_bgs_eval.play import play_tick
from marl_bgs_eval.seeds import action_keys, memory_keys, root_key
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import read_manifest
from marl_bgs_tournament.rulebook.limits import TEST_MAPS


@functools.cache
def _env(batch: int) -> Any:
    return marl_bgs.make("tdm", map_id=list(TEST_MAPS), num_envs=batch)


@functools.cache
def _starts(batch: int) -> GameState:
    """Fresh games on the test maps in turn, spawn sides alternating."""
    i = np.arange(batch)
    return _env(batch).start_games(
        i % len(TEST_MAPS), np.zeros(batch, int), (i // len(TEST_MAPS)) % 2 == 1
    )


def _bound(sys: System, params: Any) -> System:
    return sys if sys.params is None else sys.bind(params)


def _numbers(batch: int) -> jax.Array:
    return jnp.arange(batch, dtype=jnp.int32)


def _init(sys: System, keys: jax.Array) -> Any:
    """Memory of each game from its key, traced anew on every call (not cached under `jit`)."""
    return jax.vmap(_bound(sys, sys.params).init)(keys)


_LOOPS: dict[Any, Any] = {}


def _loop(sys: System, batch: int, args: tuple) -> Any:
    """The compiled loop of `n` ticks, `sys` (team A) against random (team B):
    (params, state, memory A, memory B, root, seed numbers, n) -> (state, memory A, memory B)."""
    key = (sys.program_key(), batch)
    if key not in _LOOPS:
        env, rand = _env(batch), random_system()

        def run(params: Any, state: Any, mem_a: Any, mem_b: Any, root: jax.Array,
                seeds: jax.Array, n: jax.Array) -> tuple:  # fmt: skip
            teams = (_bound(sys, params), rand)

            def body(_: Any, c: tuple) -> tuple:
                t = play_tick(env, teams, root, seeds, c[0], (c[1], c[2]))
                return t.state, t.memories[0], t.memories[1]

            return jax.lax.fori_loop(0, n, body, (state, mem_a, mem_b))

        _LOOPS[key] = jax.jit(run).lower(*args).compile()
    return _LOOPS[key]


def _loop_args(sys: System, batch: int, ticks: int, seed: int) -> tuple:
    root, numbers = root_key(seed), _numbers(batch)
    mem_a = _init(sys, memory_keys(root, numbers, numbers, 0))
    mem_b = _init(random_system(), memory_keys(root, numbers, numbers, 1))
    return (sys.params, _starts(batch), mem_a, mem_b, root, numbers, jnp.int32(ticks))


@functools.cache
def _inputs_program(batch: int) -> Callable[[GameState], TeamInputs]:
    env = _env(batch)
    return jax.jit(lambda state: team_inputs(env, state)[0])


def _team_inputs(states: GameState) -> TeamInputs:
    """Team A's permitted inputs in a batch of games on the test maps (the one place the checks
    read them; the tests wrap it to stand for a leaking engine or a System's side channel).
    Other modules call it as `recording._team_inputs`, so a patch of this module reaches them."""
    return _inputs_program(int(states.tick.shape[0]))(states)


_ACTS: dict[Any, Any] = {}


def _act_program(sys: System) -> Any:
    """jit of (params, keys, memory, inputs) -> (actions int32 [n, 5, 3], memory)."""
    key = sys.program_key()
    if key not in _ACTS:

        def act(params: Any, keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple:
            out = _bound(sys, params).act(keys, memory, inputs)
            if not isinstance(out, tuple) or len(out) != 2:
                raise TournamentError(
                    f"System {sys.name!r}: act must return (actions, memory) and nothing else"
                )
            actions, new = out
            shape = (inputs.obs.shape[0], 5, 3)
            if tuple(jnp.shape(actions)) != shape:
                raise TournamentError(
                    f"System {sys.name!r}: actions must have shape {shape}, got "
                    f"{tuple(jnp.shape(actions))}"
                )
            return jnp.asarray(actions, jnp.int32), new

        _ACTS[key] = jax.jit(act)
    return _ACTS[key]


@dataclass(frozen=True, eq=False)
class _Recording:
    """Random against random on the test maps: the state before each tick."""

    root: jax.Array
    numbers: jax.Array  # int32 [games]: seed and game numbers
    states: tuple[GameState, ...]


@functools.cache
def _recording(games: int, ticks: int, seed: int) -> _Recording:
    rand = random_system()
    args = _loop_args(rand, games, 1, seed)
    run = _loop(rand, games, args)
    params, state, mem_a, mem_b, root, numbers, one = args
    states = []
    for _ in range(ticks):
        states.append(state)
        state, mem_a, mem_b = run(params, state, mem_a, mem_b, root, numbers, one)
    return _Recording(root=root, numbers=numbers, states=tuple(states))


def _keys(sys: System, rec: _Recording, state: GameState) -> jax.Array:
    return action_keys(rec.root, rec.numbers, state.tick, 0, sys.per_agent)


def _memory_keys(rec: _Recording, offset: int = 0) -> jax.Array:
    return memory_keys(rec.root, rec.numbers, rec.numbers + offset, 0)


def _replay(sys: System, rec: _Recording, memory: Any) -> Any:
    """The System's memory after it acted on its inputs of every recorded state."""
    act = _act_program(sys)
    for state in rec.states:
        _, memory = act(sys.params, _keys(sys, rec, state), memory, _team_inputs(state))
    return memory


# --- host copies and comparisons ---------------------------------------------------------------


def _host(tree: Any) -> Any:
    """numpy copies of a pytree's leaves (typed keys as their key data); blocks until computed."""

    def one(x: Any) -> np.ndarray:
        if isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            x = jax.random.key_data(x)
        return np.asarray(x)

    return jax.tree.map(one, tree)


def _paths(tree: Any) -> list[tuple[str, np.ndarray]]:
    leaves, _ = jax.tree_util.tree_flatten_with_path(tree)
    return [(jax.tree_util.keystr(p) or "(root)", np.asarray(x)) for p, x in leaves]


def _games_differing(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """bool [n]: the games (leading axis) in which two arrays differ (NaN equals NaN)."""
    same = x == y
    if np.issubdtype(x.dtype, np.inexact):
        same |= np.isnan(x) & np.isnan(y)
    return ~same.reshape(len(x), -1).all(axis=1)


def _differences(a: Any, b: Any) -> list[tuple[str, int]]:
    """(leaf, games in which it differs) of every leaf that differs between two batched trees."""
    if jax.tree.structure(a) != jax.tree.structure(b):
        return [("(structure)", -1)]
    out = []
    for (name, x), (_, y) in zip(_paths(a), _paths(b), strict=True):
        if x.shape != y.shape or x.dtype != y.dtype:
            out.append((name, -1))
        elif n := int(_games_differing(np.atleast_1d(x), np.atleast_1d(y)).sum()):
            out.append((name, n))
    return out


def _spec(tree: Any) -> tuple[Any, list[tuple[tuple[int, ...], str]]]:
    """A tree's structure and its leaves' shapes and dtypes."""
    leaves, structure = jax.tree.flatten(_host(tree))
    return structure, [(x.shape, str(x.dtype)) for x in leaves]


def _as_system(sys: Any) -> System:
    if not isinstance(sys, System):
        raise TournamentError(f"system: expected a System, got {type(sys).__name__}")
    return sys


def _as_manifest(manifest: Any) -> dict[str, Any] | None:
    if isinstance(manifest, str | Path):
        return read_manifest(manifest)
    if manifest is not None and not isinstance(manifest, dict):
        raise TournamentError(
            f"manifest: expected a manifest dict or a System file, got {type(manifest).__name__}"
        )
    return manifest
