"""The rulebook's automated checks of one entrant (rulebook v1, paper Table S7).

    import marl_bgs_tournament.rulebook as rb
    table = rb.check_entrant("entrant.mbgs")  # or (system, manifest)
    table[~table["passed"]]

`check_entrant` runs every check and returns one row per check (columns `check`, `passed`,
`value`, `limit`, `detail`); each check is also a public function returning one `Row`:

play_limits        at 512 games at once, >= 5,000 game steps/s and <= 10 GB of device memory
information_limits a System reads only what its views permit: enemy units that no living agent
                   of its team can see are changed in ways that must not matter (health,
                   cooldown, statuses, last actions, the enemy team's messages); its inputs must
                   not change (else the engine leaks, named by leaf) nor its actions and memory
                   with the same keys and memory (else the System reads something else)
memory_reset       `init(key)` is a pure function of the key (the same memory for the same key,
                   also after the System played other games), at most `MAX_MEMORY_PER_GAME` bytes
                   per game (the portable file format's limit)
weights_unchanged  a parametric System's weights hash the same before and after play, are not
                   copied into its memory (where play could change them), and for a file equal
                   the manifest's hashes
training_declared  the manifest declares its training, no test map (47-51) and no scenario
full_games         whole games of the tick limit (no game ends early) against random at every
                   batch size the file declares: a failure late in a game (a "time bomb") shows.
                   Run through `marl_bgs_tournament.sandbox`, every move is timed against the
                   rulebook's limits (`sandbox.LIMITS`); run here, a program that never ends
                   hangs this process

The perturbation test, the memory and the weights checks share one recording: `games` games on
the test maps, random against random, for `ticks` ticks (early in a game the teams do not see
each other, so every state has hidden units to change). The System is fed its team's inputs of
every recorded state in turn and keeps its memory, but does not steer these games: what a System
may react to is its inputs alone, so any reachable state serves, and every entrant is checked on
the same states without compiling the engine again. Hidden units keep their positions (moving
one changes sight lines) and dead ones are left alone.

Play limits on a GPU (`jax.default_backend() == "gpu"`) are measured as written: 512 games, the
System as team A against the engine's random System, `GPU_TICKS` ticks through one compiled loop
of `marl_bgs_eval.play.play_tick` (compiled first, timed after, the best of `TIMING_REPEATS`);
memory is the device's peak bytes in use, this process's so far (else the compiled loop's
`memory_analysis`). A System that cannot play 512 games at once fails.

On a CPU (a laptop, CI) a GPU's speed cannot be measured, so the rule is scaled: the same loop
runs at `CPU_BATCH` (16) games for `CPU_TICKS` ticks twice, the System against random and random
against random, timed alternately in the same run (best of `TIMING_REPEATS` each), and the
System passes when its game steps/s are at least `CPU_MIN_SPEED_RATIO` (0.2) of random against
random's: a tick with the System may take at most five times a random-vs-random tick, and the
machine's own speed cancels out of the ratio. Memory on a CPU is the `memory_analysis`
of the System's compiled `act` for 512 games (arguments + outputs + temporaries + code - aliased)
<= 10 GB; a System that cannot be traced at 512 games (a file exported without that batch size)
is measured at `CPU_BATCH` games and scaled linearly to 512. Measured on a shared 2-core CPU
(16 games x 32 ticks): random against random 17,000-34,000 steps/s (as busy as the machine was);
tdm-beta (as a System file) 0.33-0.37 of it, a small linear policy 0.75-0.81, the same policy
with 16 or 64 matmuls of 256 x 256 per tick 0.09 or 0.025.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import marl_bgs
from marl_bgs import GameState, TeamInputs, team_inputs
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.config import LIMITS as RULE_LIMITS
from marl_bgs.tdm.perception import perceive
from marl_bgs_eval import EvalError, System, evaluate, random_system
from marl_bgs_eval.play import play_tick
from marl_bgs_eval.seeds import action_keys, memory_keys, root_key
from marl_bgs_eval.watch import Watch
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import MAX_MEMORY_BYTES, load_system, read_manifest, weight_sha256

# --- the limits: rulebook v1 (paper Table S7) ---------------------------------------------------
RULEBOOK = "v2"  # v2: the full_games check and the sandbox's limits
TICK_LIMIT = 300  # ticks of a rulebook game (a season's default)
PLAY_BATCH = 512  # games at once for the play limits
MIN_STEPS_PER_S = 5_000.0  # game steps (games x ticks) per second, GPU
MAX_DEVICE_BYTES = 10 * 10**9  # 10 GB of device memory at PLAY_BATCH games
MAX_MEMORY_PER_GAME = MAX_MEMORY_BYTES  # memory of one game (the portable file format's limit)
TEST_MAPS = tuple(marl_bgs.maps.split("test"))  # 47-51: training must never touch them
GPU_TICKS = 64  # ticks timed at PLAY_BATCH games on a GPU
CPU_BATCH = 16  # the scaled CPU rule's games...
CPU_TICKS = 32  # ...and ticks
CPU_MIN_SPEED_RATIO = 0.2  # the System's steps/s over random-vs-random's, same run, CPU
TIMING_REPEATS = 3  # timed runs of each loop; the fastest counts
GAMES = 16  # games of the shared recording (information, memory and weights checks)
TICKS = 8  # its ticks: every recorded state is checked
MIN_WEIGHT_SIZE = 8  # weight leaves this small (or constant) are not searched for in memory
PERTURBED = ("health", "cooldown", "stun", "trap", "slow_charge", "slow_hunter", "slow_poison",
             "antiheal", "freedom", "burst", "last_move", "last_ult")  # fmt: skip
CHECKS = ("full_games", "play_limits", "information_limits", "memory_reset", "weights_unchanged",
          "training_declared")  # fmt: skip
MANIFEST_CHECKS = ("training_declared",)  # checks that read the manifest alone, no program
COLUMNS = ("check", "passed", "value", "limit", "detail")


class Row(NamedTuple):
    """One check's result: a row of `check_entrant`'s table."""

    check: str
    passed: bool
    value: Any
    limit: Any
    detail: str


# --- shared machinery: envs, compiled loops, the recording ------------------------------------


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
    read them; the tests wrap it to stand for a leaking engine or a System's side channel)."""
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


def _gb(n: float) -> str:
    return f"{n / 1e9:.3g} GB"


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


# --- 1. play limits ------------------------------------------------------------------------


def _analysis_bytes(stats: Any) -> int | None:
    if stats is None:
        return None
    return int(
        stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes
        + stats.generated_code_size_in_bytes - stats.alias_size_in_bytes
    )  # fmt: skip


def _timer(sys: System, batch: int, ticks: int, seed: int) -> Callable[[], float]:
    """Seconds of one run of `ticks` ticks (the loop compiled and run once before)."""
    args = _loop_args(sys, batch, ticks, seed)
    run = _loop(sys, batch, args)
    jax.block_until_ready(run(*args))

    def once() -> float:
        start = time.perf_counter()
        jax.block_until_ready(run(*args))
        return time.perf_counter() - start

    return once


def act_memory_bytes(sys: System, batch: int = PLAY_BATCH) -> tuple[int | None, str]:
    """Bytes of the System's compiled `act` for `batch` games (XLA's memory_analysis) and how
    they were found: at `batch`, or at `CPU_BATCH` scaled linearly when it cannot be traced at
    `batch` (a file exported without that batch size; then the program the other checks run)."""
    starts = _starts(CPU_BATCH)
    env = _env(CPU_BATCH)
    inputs = jax.eval_shape(lambda s: team_inputs(env, s)[0], starts)
    spec = lambda x: jax.ShapeDtypeStruct((batch, *x.shape[1:]), x.dtype)  # noqa: E731
    keys = jax.ShapeDtypeStruct((batch, 5) if sys.per_agent else (batch,), jax.random.key(0).dtype)
    try:
        memory = jax.eval_shape(lambda k: _init(sys, k), keys)
        lowered = _act_program(sys).lower(sys.params, keys, memory, jax.tree.map(spec, inputs))
        found = _analysis_bytes(lowered.compile().memory_analysis())
        return found, f"compiled act at {batch} games"
    except (EvalError, TournamentError) as err:
        how = f"compiled act at {CPU_BATCH} games x {batch / CPU_BATCH:g} ({str(err)[:80]})"
    root, numbers = root_key(0), _numbers(CPU_BATCH)
    args = (
        sys.params,
        action_keys(root, numbers, starts.tick, 0, sys.per_agent),
        _init(sys, memory_keys(root, numbers, numbers, 0)),
        _team_inputs(starts),
    )
    found = _analysis_bytes(_act_program(sys).lower(*args).compile().memory_analysis())
    return (None if found is None else found * batch // CPU_BATCH), how


def play_limits(system: System, *, seed: int = 0) -> Row:
    """Speed and memory at 512 games (GPU), or the scaled CPU rule (module docstring)."""
    sys = _as_system(system)
    if jax.default_backend() == "gpu":
        return _play_limits_gpu(sys, seed)
    return _play_limits_cpu(sys, seed)


def _play_limits_gpu(sys: System, seed: int) -> Row:
    try:
        once = _timer(sys, PLAY_BATCH, GPU_TICKS, seed)
    except (EvalError, TournamentError) as err:
        return Row(
            "play_limits",
            False,
            None,
            MIN_STEPS_PER_S,
            f"cannot play {PLAY_BATCH} games at once: {err}",
        )
    best = min(once() for _ in range(TIMING_REPEATS))
    steps = PLAY_BATCH * GPU_TICKS / best
    # The compiled loop's own needs: a process-wide device peak would also count what earlier
    # entrants or games left behind.
    args = _loop_args(sys, PLAY_BATCH, GPU_TICKS, seed)
    peak = _analysis_bytes(_loop(sys, PLAY_BATCH, args).memory_analysis())
    how = "compiled loop's memory_analysis"
    fast = steps >= MIN_STEPS_PER_S
    small = peak is not None and peak <= MAX_DEVICE_BYTES
    memory = "unknown" if peak is None else _gb(peak)
    detail = (
        f"{steps:,.0f} game steps/s at {PLAY_BATCH} games x {GPU_TICKS} ticks (>= "
        f"{MIN_STEPS_PER_S:,.0f}{'' if fast else ': too slow'}); memory {memory} ({how}; <= "
        f"{_gb(MAX_DEVICE_BYTES)}{'' if small else ': too much'})"
    )
    return Row("play_limits", bool(fast and small), round(steps, 1), MIN_STEPS_PER_S, detail)


def _play_limits_cpu(sys: System, seed: int) -> Row:
    mine = _timer(sys, CPU_BATCH, CPU_TICKS, seed)
    base = _timer(random_system(), CPU_BATCH, CPU_TICKS, seed)
    t_mine, t_base = np.inf, np.inf
    for _ in range(TIMING_REPEATS):  # alternately, so a busy moment slows both
        t_mine, t_base = min(t_mine, mine()), min(t_base, base())
    steps = CPU_BATCH * CPU_TICKS / t_mine
    base_steps = CPU_BATCH * CPU_TICKS / t_base
    ratio = steps / base_steps
    found, how = act_memory_bytes(sys)
    fast = ratio >= CPU_MIN_SPEED_RATIO
    small = found is None or found <= MAX_DEVICE_BYTES
    memory = "not reported by this backend" if found is None else _gb(found)
    detail = (
        f"CPU scaled rule: {steps:,.0f} game steps/s at {CPU_BATCH} games x {CPU_TICKS} ticks, "
        f"{ratio:.3f} of random vs random's {base_steps:,.0f} (>= {CPU_MIN_SPEED_RATIO}"
        f"{'' if fast else ': too slow'}); memory at {PLAY_BATCH} games {memory} ({how}; <= "
        f"{_gb(MAX_DEVICE_BYTES)}{'' if small else ': too much'})"
    )
    return Row("play_limits", bool(fast and small), round(ratio, 4), CPU_MIN_SPEED_RATIO, detail)


# --- 2. information limits -------------------------------------------------------------------


def hidden_enemies(states: GameState) -> jax.Array:
    """bool [n, 10]: team B's living units that no living agent of team A sees."""
    sight = jax.vmap(perceive)(states).team_sight  # [n, observer, observed]
    u = states.units
    enemy = jnp.arange(10) >= 5
    return enemy & (u.class_id > 0) & u.alive & ~jnp.any(sight[:, :5, :], axis=1)


@jax.jit
def perturb_hidden(states: GameState, key: jax.Array) -> tuple[GameState, jax.Array]:
    """The states with every hidden enemy unit (`hidden_enemies`) given another valid health
    (5-100% of its class's maximum), cooldown, statuses and last actions, and the enemy team's
    messages redrawn: nothing team A may know changes. Also how many units were changed."""
    hidden = hidden_enemies(states)
    u = states.units
    keys = iter(jax.random.split(key, len(PERTURBED) + 1))
    shape = u.health.shape
    top = jnp.asarray(C.MAX_HEALTH)[u.class_id]
    caps = {**C.DURATION_CAPS, "last_move": 8, "last_ult": 1}
    changes = {}
    for name in PERTURBED:
        old = getattr(u, name)
        if name == "health":
            new = jax.random.uniform(next(keys), shape, old.dtype, 0.05, 1.0) * top
        else:
            new = jax.random.randint(next(keys), shape, 0, caps[name] + 1).astype(old.dtype)
        changes[name] = jnp.where(hidden, new, old)
    msgs = states.messages
    noise = jax.random.normal(next(keys), msgs.shape, msgs.dtype)
    msgs = jnp.where((jnp.arange(10) >= 5)[None, :, None], noise, msgs)
    out = states.replace(units=u.replace(**changes), messages=msgs)
    return out, jnp.sum(hidden, dtype=jnp.int32)


def information_limits(
    system: System, *, games: int = GAMES, ticks: int = TICKS, seed: int = 0
) -> Row:
    """The perturbation test (module docstring): identical inputs, actions and memory when only
    hidden enemy units change."""
    sys = _as_system(system)
    rec = _recording(games, ticks, seed)
    act = _act_program(sys)
    memory = _init(sys, _memory_keys(rec))
    count, leaks, reads = 0, [], []
    for t, state in enumerate(rec.states):
        keys = _keys(sys, rec, state)
        changed, n = perturb_hidden(state, jax.random.fold_in(rec.root, 1000 + t))
        count += int(n)
        # Each state's inputs, then at once the actions on them (a side channel the tests
        # use reads the state of the latest inputs while the System acts).
        inputs = _team_inputs(state)
        out = act(sys.params, keys, memory, inputs)
        seen = _host((inputs, out))
        other_inputs = _team_inputs(changed)
        other = _host((other_inputs, act(sys.params, keys, memory, other_inputs)))
        leaks += [(t, *d) for d in _differences(seen[0], other[0])]
        reads += [(t, *d) for d in _differences(seen[1], other[1])]
        memory = out[1]
    what = (
        f"{count} hidden enemy units changed in {games} games x {ticks} ticks on maps "
        f"{TEST_MAPS[0]}-{TEST_MAPS[-1]}"
    )
    limit = "> 0 changed; inputs, actions and memory identical"
    if leaks:
        t, leaf, n = leaks[0]
        names = sorted({leaf for _, leaf, _ in leaks})
        return Row(
            "information_limits",
            False,
            count,
            limit,
            f"ENGINE leak: the System's TeamInputs leaf {leaf} changed in {n} games at "
            f"tick {t} when only hidden enemy units did (leaves {names[:6]}); {what}",
        )
    if reads:
        t, leaf, n = reads[0]
        part = "actions" if leaf.startswith("[0]") else f"memory {leaf.removeprefix('[1]')}"
        games_txt = f"{n} of {games} games" if n >= 0 else "shape or structure"
        return Row(
            "information_limits",
            False,
            count,
            limit,
            f"the System's {part} changed ({games_txt}, tick {t}) with the same inputs, "
            f"keys and memory when only hidden enemy units changed: it reads something "
            f"outside its permitted inputs; {what}",
        )
    if count == 0:
        return Row(
            "information_limits",
            False,
            0,
            limit,
            f"no hidden enemy unit to change: the test proves nothing; {what}",
        )
    return Row(
        "information_limits", True, count, limit, f"{what}: identical inputs, actions and memory"
    )


# --- 3. memory reset -------------------------------------------------------------------------


def _bytes_per_game(memory: Any) -> int:
    return sum(int(x[0].nbytes) for x in jax.tree.leaves(_host(memory)))


def memory_reset(system: System, *, games: int = GAMES, ticks: int = TICKS, seed: int = 0) -> Row:
    """`init(key)` gives the same memory for the same key, also after the System played other
    games, and one game's memory fits in `MAX_MEMORY_PER_GAME` bytes (also after playing)."""
    sys = _as_system(system)
    rec = _recording(games, ticks, seed)
    first = _host(_init(sys, _memory_keys(rec)))
    played = _replay(sys, rec, _init(sys, _memory_keys(rec, offset=games)))
    again = _host(_init(sys, _memory_keys(rec)))
    size = _bytes_per_game(first)
    limit = f"same memory for the same key; <= {MAX_MEMORY_PER_GAME} bytes per game"
    problems = []
    if diffs := _differences(first, again):
        leaf, n = diffs[0]
        where = f"in {n} of {games} games" if n >= 0 else "in shape or structure"
        problems.append(
            f"init(key) gave other memory for the same key after play (leaf {leaf} "
            f"{where}): memory does not start fresh every game"
        )
    if _spec(played) != _spec(first):
        problems.append("act returns memory of other leaves, shapes or dtypes than init")
    if size > MAX_MEMORY_PER_GAME:
        problems.append(f"{size} bytes of memory per game, more than {MAX_MEMORY_PER_GAME}")
    detail = "; ".join(problems) or (
        f"init is a function of its key alone ({games} games, before and after {ticks} ticks "
        f"of play); {size} bytes per game"
    )
    return Row("memory_reset", not problems, size, limit, detail)


# --- 4. weights unchanged --------------------------------------------------------------------


def weight_hashes(params: Any) -> list[str]:
    """sha256 of each weight leaf's `.npy` bytes, in leaf order (a System file's member hashes)."""
    return [weight_sha256(_host(x)) for x in jax.tree.leaves(params)]


def _copies(params: Any, memory: Any) -> list[str]:
    """Memory leaves holding an exact copy of a weight leaf (in some game)."""
    found = []
    for p_name, p in _paths(_host(params)):
        if p.size < MIN_WEIGHT_SIZE or np.all(p == p.flat[0]):
            continue  # too small or constant to tell a copy from a coincidence
        for m_name, m in _paths(_host(memory)):
            same_kind = m.ndim and m[0].size == p.size and m.dtype == p.dtype
            if same_kind and (m.reshape(len(m), -1) == p.reshape(1, -1)).all(axis=1).any():
                found.append(f"memory {m_name} holds weights {p_name}")
    return found


def weights_unchanged(
    system: System, manifest: dict[str, Any] | str | Path | None = None, *,
    games: int = GAMES, ticks: int = TICKS, seed: int = 0,
) -> Row:  # fmt: skip
    """A parametric System's weights hash the same before and after `ticks` ticks of play and
    are never copied into its memory; with a manifest (or a System file's path) they equal the
    file's weights (its members' sha256)."""
    sys = _as_system(system)
    m = _as_manifest(manifest)
    if sys.params is None and m is None:
        return Row(
            "weights_unchanged",
            True,
            None,
            "unchanged",
            "not parametric: any weights are compiled into its functions",
        )
    rec = _recording(games, ticks, seed)
    before = weight_hashes(sys.params)
    start = _init(sys, _memory_keys(rec))
    problems = _copies(sys.params, start)
    played = _replay(sys, rec, start)
    problems += [c for c in _copies(sys.params, played) if c not in problems]
    after = weight_hashes(sys.params)
    if after != before:
        changed = [k for k, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        problems.insert(0, f"weight leaves {changed[:6]} changed during {ticks} ticks of play")
    if m is not None:
        wanted = [m["members"].get(f"param-{k:04d}.npy") for k in range(len(m["params"]))]
        if before != wanted:
            problems.append(
                f"the weights ({len(before)} leaves) are not the file's "
                f"({len(wanted)} leaves; manifest members' sha256 differ)"
            )
    digest = hashlib.sha256("".join(before).encode()).hexdigest()[:16]
    detail = "; ".join(problems) or (
        f"{len(before)} weight leaves hash the same before and after {ticks} ticks, none in "
        f"memory" + ("; they are the file's" if m is not None else "")
    )
    return Row("weights_unchanged", not problems, digest, "unchanged", detail)


# --- 5. training declared --------------------------------------------------------------------


def training_declared(manifest: dict[str, Any] | str | Path | None) -> Row:
    """The manifest declares its training: no test map among its maps, no scenario."""
    m = _as_manifest(manifest)
    limit = f"declared; no test map {list(TEST_MAPS)}; no scenario"
    training = None if m is None else m.get("training")
    if training is None:
        why = "no manifest" if m is None else "manifest.training is null"
        return Row("training_declared", False, None, limit, f"training undeclared ({why})")
    maps = [int(x) for x in training.get("maps", [])]
    scenarios = [str(x) for x in training.get("scenarios", [])]
    problems = []
    if test := sorted(set(maps) & set(TEST_MAPS)):
        problems.append(f"trained on test map(s) {test}")
    if scenarios:
        problems.append(f"trained on scenario(s) {scenarios[:8]}")
    value = f"{len(set(maps))} maps, {len(scenarios)} scenarios"
    detail = "; ".join(problems) or f"declared: maps {sorted(set(maps))}, no scenario"
    return Row("training_declared", not problems, value, limit, detail)


# --- 6. full games ---------------------------------------------------------------------------


def _spread(batch: int) -> tuple[list[int], int]:
    """Test maps and games per map that fill one batch of `batch` games (at least 2 games)."""
    for m in range(len(TEST_MAPS), 0, -1):
        if batch % (2 * m) == 0:
            return list(TEST_MAPS[:m]), batch // m
    return list(TEST_MAPS[:1]), batch + batch % 2


def full_games(
    system: System, manifest: dict[str, Any] | str | Path | None = None, *,
    tick_limit: int = TICK_LIMIT, seed: int = 0, watch: Watch | None = None,
) -> Row:  # fmt: skip
    """Games of `tick_limit` ticks against random, none ending early, at every batch size the
    manifest declares (without one: `CPU_BATCH`); `watch` hears every move (the sandbox)."""
    sys = _as_system(system)
    m = _as_manifest(manifest)
    sizes = [CPU_BATCH] if m is None else [int(b) for b in m["batch_sizes"]]
    limit = f"{tick_limit} ticks at batch sizes {sizes}"
    played = 0
    for b in sizes:
        maps, per_map = _spread(b)
        games = evaluate(sys, random_system(), maps=maps, games_per_map=per_map, batch_size=b,
                         tick_limit=tick_limit, winning_score=RULE_LIMITS["winning_score"][1],
                         metrics="none", seed=seed, watch=watch)  # fmt: skip
        ticks = games["ticks"].to_numpy()
        if (ticks < tick_limit).any():
            k = int(np.argmax(ticks < tick_limit))
            return Row("full_games", False, played, limit,
                       f"game {int(games['game'].to_numpy()[k])} at batch {b} ended after "
                       f"{int(ticks[k])} of {tick_limit} ticks")  # fmt: skip
        played += len(games)
    detail = f"{played} games of {tick_limit} ticks against random at batch sizes {sizes}"
    return Row("full_games", True, played, limit, detail)


# --- all checks --------------------------------------------------------------------------------


def _guarded(name: str, check: Callable[[], Row]) -> Row:
    """A check's row; a System that crashes it fails it, named. Running out of memory is not
    a check's result but the machine's limit: it ends every check (the sandbox refuses)."""
    try:
        return check()
    except Exception as err:
        if isinstance(err, MemoryError) or "RESOURCE_EXHAUSTED" in str(err):
            raise
        return Row(name, False, None, None, f"error: {type(err).__name__}: {str(err)[:300]}")


def check_entrant(
    system: System | str | Path, manifest: dict[str, Any] | str | Path | None = None, *,
    games: int = GAMES, ticks: int = TICKS, seed: int = 0,
    checks: Sequence[str] = CHECKS, tick_limit: int = TICK_LIMIT,
    watch: Watch | None = None, before: Callable[[str], None] | None = None,
) -> pd.DataFrame:  # fmt: skip
    """Every check of one entrant: a System (with its manifest, a dict or its file's path) or a
    System file's path. One row per check: check, passed, value, limit, detail. `watch` hears
    the moves of `full_games`; `before(check)` hears of each check first (the sandbox's clock)."""
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise TournamentError(f"checks: unknown {unknown}; allowed {list(CHECKS)}")
    if isinstance(system, str | Path):
        manifest = system if manifest is None else manifest
        system = load_system(system)
    sys = _as_system(system)
    m = _as_manifest(manifest)
    run = {
        "full_games": lambda: full_games(sys, m, tick_limit=tick_limit, seed=seed, watch=watch),
        "play_limits": lambda: play_limits(sys, seed=seed),
        "information_limits": lambda: information_limits(sys, games=games, ticks=ticks, seed=seed),
        "memory_reset": lambda: memory_reset(sys, games=games, ticks=ticks, seed=seed),
        "weights_unchanged": lambda: weights_unchanged(sys, m, games=games, ticks=ticks,
                                                       seed=seed),
        "training_declared": lambda: training_declared(m),
    }  # fmt: skip
    rows = []
    for name in checks:
        if before is not None:
            before(name)
        rows.append(_guarded(name, run[name]))
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table["passed"] = table["passed"].astype(bool)
    return table
