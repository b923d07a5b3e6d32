"""What the checks share: each mode's rulebook envs and starts (its test layouts), the compiled
loop of a System against random, the compiled `act`, the recording of random against random, the
one place the checks read a team's inputs (`_team_inputs`), host copies and comparisons of batched
trees, and the checks' argument checks. Everything is the System's mode's (`System.mode`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs import BatchedEnv, TeamInputs, team_inputs
from marl_bgs_eval import System, random_system
from marl_bgs_eval import modes as eval_modes
from marl_bgs_eval.play import play_tick
from marl_bgs_eval.seeds import action_keys, memory_keys, root_key
from marl_bgs_tournament import modes
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import read_manifest
from marl_bgs_tournament.portable.format import mode_spec


@functools.cache
def _layouts(mode: str) -> list[eval_modes.Layout]:
    """The layouts the rulebook's games play: the mode's test layouts (or all), those of the
    first shape group where they differ in shape."""
    kit = modes.kit(mode)
    picked = list(modes.season_layouts(mode))
    if kit.layouts is not None:
        picked = kit.layouts.shape_groups(picked)[0]
    return eval_modes.parts(mode).layouts(kit, picked, None)


@functools.cache
def _env(mode: str, batch: int) -> BatchedEnv:
    kit = modes.kit(mode)
    return eval_modes.parts(mode).build(kit, _layouts(mode), batch, None, None, {})


@functools.cache
def _starts(mode: str, batch: int) -> Any:
    """Fresh games on the mode's rulebook layouts in turn, spawn sides alternating."""
    i, n = np.arange(batch), len(_layouts(mode))
    keys = jax.random.split(jax.random.key(0), batch)
    return eval_modes.parts(mode).start_games(
        _env(mode, batch), i % n, np.zeros(batch, int), (i // n) % 2 == 1, keys
    )


def _team_size(mode: str) -> int:
    return mode_spec(mode).team_size


def _bound(sys: System, params: Any) -> System:
    return sys if sys.params is None else sys.bind(params)


def _numbers(batch: int) -> jax.Array:
    return jnp.arange(batch, dtype=jnp.int32)


def _init(sys: System, keys: jax.Array) -> Any:
    """Memory of each game from its key, traced anew on every call (not cached under `jit`)."""
    return jax.vmap(_bound(sys, sys.params).init)(keys)


_LOOPS: dict[Any, Any] = {}


def _loop(sys: System, batch: int, args: tuple) -> Any:
    """The compiled loop of `n` ticks, `sys` (team A) against random (team B; a mode that plays
    its second team itself: `sys` alone): (params, state, memory A, memory B, root, seed
    numbers, n) -> (state, memory A, memory B)."""
    key = (sys.program_key(), sys.mode, batch)
    if key not in _LOOPS:
        env, rand = _env(sys.mode, batch), random_system(sys.mode)
        two = len(env.spec.teams) == 2

        def run(params: Any, state: Any, mem_a: Any, mem_b: Any, root: jax.Array,
                seeds: jax.Array, n: jax.Array) -> tuple:  # fmt: skip
            teams = (_bound(sys, params), rand)[: len(env.spec.teams)]

            def body(_: Any, c: tuple) -> tuple:
                t = play_tick(env, teams, root, seeds, c[0], (c[1], c[2])[: len(teams)])
                return t.state, t.memories[0], t.memories[1] if two else c[2]

            return jax.lax.fori_loop(0, n, body, (state, mem_a, mem_b))

        _LOOPS[key] = jax.jit(run).lower(*args).compile()
    return _LOOPS[key]


def _loop_args(sys: System, batch: int, ticks: int, seed: int) -> tuple:
    root, numbers = root_key(seed), _numbers(batch)
    mem_a = _init(sys, memory_keys(root, numbers, numbers, 0))
    mem_b = _init(random_system(sys.mode), memory_keys(root, numbers, numbers, 1))
    return (sys.params, _starts(sys.mode, batch), mem_a, mem_b, root, numbers, jnp.int32(ticks))


@functools.cache
def _inputs_program(mode: str, batch: int) -> Callable[[Any], TeamInputs]:
    env = _env(mode, batch)
    return jax.jit(lambda state: team_inputs(env, state)[0])


def _team_inputs(mode: str, states: Any) -> TeamInputs:
    """Team A's permitted inputs in a batch of games of `mode` on its rulebook layouts (the one
    place the checks read them; the tests wrap it to stand for a leaking engine or a System's
    side channel). Other modules call it as `recording._team_inputs`, so a patch of this module
    reaches them."""
    return _inputs_program(mode, int(states.tick.shape[0]))(states)


_ACTS: dict[Any, Any] = {}


def _act_program(sys: System) -> Any:
    """jit of (params, keys, memory, inputs) -> (actions int32 [n, team size, heads], memory)."""
    key = sys.program_key()
    spec = mode_spec(sys.mode)
    if key not in _ACTS:

        def act(params: Any, keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple:
            out = _bound(sys, params).act(keys, memory, inputs)
            if not isinstance(out, tuple) or len(out) != 2:
                raise TournamentError(
                    f"System {sys.name!r}: act must return (actions, memory) and nothing else"
                )
            actions, new = out
            shape = (inputs.obs.shape[0], spec.team_size, len(spec.action_heads))
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
    """Random against random on the mode's rulebook layouts: the state before each tick."""

    mode: str
    root: jax.Array
    numbers: jax.Array  # int32 [games]: seed and game numbers
    states: tuple[Any, ...]


@functools.cache
def _recording(mode: str, games: int, ticks: int, seed: int) -> _Recording:
    rand = random_system(mode)
    args = _loop_args(rand, games, 1, seed)
    run = _loop(rand, games, args)
    params, state, mem_a, mem_b, root, numbers, one = args
    states = []
    for _ in range(ticks):
        states.append(state)
        state, mem_a, mem_b = run(params, state, mem_a, mem_b, root, numbers, one)
    return _Recording(mode=rand.mode, root=root, numbers=numbers, states=tuple(states))


def _keys(sys: System, rec: _Recording, state: Any) -> jax.Array:
    return action_keys(rec.root, rec.numbers, state.tick, 0, sys.per_agent, _team_size(rec.mode))


def _memory_keys(rec: _Recording, offset: int = 0) -> jax.Array:
    return memory_keys(rec.root, rec.numbers, rec.numbers + offset, 0)


def _replay(sys: System, rec: _Recording, memory: Any) -> Any:
    """The System's memory after it acted on its inputs of every recorded state."""
    act = _act_program(sys)
    for state in rec.states:
        _, memory = act(sys.params, _keys(sys, rec, state), memory, _team_inputs(rec.mode, state))
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
