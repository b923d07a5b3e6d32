"""Replays: record the games a user picks from a results table, check them against the engine,
and look at any tick as the whole state or as one agent saw it.

    games = ev.evaluate(a, b, maps=[12], games_per_map=4, tick_limit=40)
    replays = record(a, b, games.head(2), tick_limit=40)
    save(replays[0], "game-0.replay.zip")
    replay = load("game-0.replay.zip")  # checked: hostile files are refused
    verify(replay)                 # the engine reproduces every recorded state, mask and fact
    view, mask = pov(replay, slot=3, tick=10)

A picked game is rebuilt from its row (map, rosters, spawn ends, rule values, seed, seed number
and game number), so its keys are the keys it drew in evaluation, and it is played by the same
`play_tick` as evaluation, in one compiled `lax.scan` for all picked games. `record` checks that
every game ends exactly as its row says. The file format is `marl_bgs_eval.replay_files`'s (any
mode; `load` opens them all); Team Deathmatch's tick schema is `marl_bgs_eval.tdm.replay`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import marl_bgs
from marl_bgs import ActionMasks, AgentView, ConfigError, Facts, GameState
from marl_bgs.core.checks import check_int
from marl_bgs.core.env import available_memory
from marl_bgs.tdm.config import LIMITS
from marl_bgs.tdm.maps import CUSTOM_MAP_ID, MapSpec
from marl_bgs.tdm.maps import load as load_map
from marl_bgs.tdm.mode import TDMEnv
from marl_bgs_eval import results
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.evaluate import as_system, resolve_maps
from marl_bgs_eval.play import Tick, join_teams, play_tick
from marl_bgs_eval.replay_files import FORMAT, check_replay, load, named_leaves, save
from marl_bgs_eval.seeds import memory_keys, root_key
from marl_bgs_eval.systems import System
from marl_bgs_eval.tdm import metrics as mt
from marl_bgs_eval.tdm.maps import MapsLike
from marl_bgs_eval.tdm.replay import engine_env, is_static, layout, mode_id, state_structure
from marl_bgs_eval.tdm.results import RESULT_OF_OUTCOME

__all__ = [
    "Pov", "Replay", "load", "metrics", "oracle", "pov", "record", "save", "summary", "verify",
    "view",
]  # fmt: skip

SETTINGS = ("shared_sight", "red_zone_depth", "wave_period", "shield_ticks", "shield_speed")
HARMLESS = ("spawn_swap", "reward_fn")  # `evaluate` takes them too; they change no scheduled game
FROM_ROWS = ("tick_limit", "winning_score")
Row = dict[str, Any]  # one results row, as plain values


class Pov(NamedTuple):
    """What one agent had at a decision: its permitted view and its legal actions (numpy)."""

    view: AgentView
    mask: ActionMasks


def _dynamic(state: GameState) -> dict[str, jax.Array]:
    return {k: v for k, v in named_leaves("state", state).items() if not is_static(k)}


def tick_record(t: Tick) -> dict[str, jax.Array]:
    """What a replay keeps of one played tick (batched): the state it started from (fields that
    change), the Systems' actions, who chose them, both teams' masks and the step's facts."""
    masks = join_teams(t.inputs[0].masks, t.inputs[1].masks)
    return {
        **_dynamic(t.before), "actions": t.actions, "who": join_teams(*t.whos),
        **named_leaves("masks", masks), **named_leaves("facts", t.facts),
    }  # fmt: skip


@functools.cache
def _recorder(n: int, ticks: int, shared_sight: bool, team_a: System, team_b: System) -> Callable:
    """The jitted `run(starts, seeds, games, root) -> (final state, per-tick records)`."""
    env = marl_bgs.make("tdm", num_envs=n, shared_sight=shared_sight)
    teams = (team_a.bind(team_a.params), team_b.bind(team_b.params))

    def run(starts: GameState, seeds: jax.Array, games: jax.Array, root: jax.Array) -> Any:
        memories = tuple(
            jax.vmap(s.init)(memory_keys(root, seeds, games, t)) for t, s in enumerate(teams)
        )

        def tick(carry: tuple[GameState, Any], _: None) -> tuple[Any, dict[str, jax.Array]]:
            t = play_tick(env, teams, root, seeds, *carry)
            return (t.state, t.memories), tick_record(t)

        (final, _), per_tick = jax.lax.scan(tick, (starts, memories), None, length=ticks)
        return final, per_tick

    return jax.jit(run)


def _settings(env_kwargs: dict[str, Any], rows: pd.DataFrame) -> dict[str, Any]:
    """The engine settings of a recording: the rows' limits, the caller's other rule values."""
    allowed = [*SETTINGS, *HARMLESS, *FROM_ROWS, "message_dim"]
    unknown = sorted(k for k in env_kwargs if k not in allowed)
    if unknown:
        raise EvalError(
            f"{unknown[0]}: not a setting of record; allowed {allowed} (maps, rosters and spawn "
            "ends come from each game's row)"
        )
    if env_kwargs.get("message_dim", 0):
        raise EvalError("message_dim: evaluation does not carry messages yet; use 0")
    for k in FROM_ROWS:
        if k in env_kwargs and not np.all(rows[k].to_numpy() == env_kwargs[k]):
            raise EvalError(f"{k}: {env_kwargs[k]!r} differs from the games' {k} column")
    return {k: v for k, v in env_kwargs.items() if k in (*SETTINGS, *HARMLESS)}


def _map_of(row: Row, k: int, custom: dict[str, MapSpec]) -> MapSpec:
    """The map a row was played on: a given map of that content, else the shipped map."""
    where = f"games: row {k} (game {row['game']})"
    if row["map_hash"] in custom:
        return custom[row["map_hash"]]
    if row["map"] == CUSTOM_MAP_ID:
        raise EvalError(
            f"{where}: custom map {row['map_name']!r} (map_hash {row['map_hash']}) is not among "
            "`maps`; pass its file or MapSpec"
        )
    spec = load_map(int(row["map"]))
    if spec.content_hash != row["map_hash"]:
        raise EvalError(f"{where}: map_hash {row['map_hash']} is not shipped map {row['map']}")
    return spec


def _batch(n: int, ticks: int) -> int:
    """Games per recording batch: a power of two, at most what a quarter of memory holds."""
    per_game = ticks * sum(int(np.prod(s)) * d.itemsize for s, d in layout(1).values())
    fits = max(1, available_memory() // 4 // per_game)
    return min(1 << (n - 1).bit_length(), 1 << (fits.bit_length() - 1))


def record(
    team_a: System | str,
    team_b: System | str,
    games: pd.DataFrame,
    *,
    maps: MapsLike | None = None,
    **env_kwargs: Any,
) -> list[Replay]:
    """Record the games of `games` (rows of `evaluate`'s results between these Systems), one
    `Replay` per row, in row order. `maps` supplies custom maps (files or MapSpecs; shipped maps
    are found by id). `env_kwargs` are the engine keywords the evaluation was given
    (`shared_sight`, `red_zone_depth`, ...; `tick_limit` and `winning_score` come from the rows).
    Raises EvalError if a game does not end as its row says (other settings or Systems?)."""
    rows = results.validate(games, "games", complete=False)
    if results.mode_of(rows) != mode_id():
        raise EvalError(
            f"games: rows of {results.mode_of(rows)}; this records {mode_id()} games "
            "(every mode's: marl_bgs_eval.record_games)"
        )
    a, b = as_system(team_a, "team_a"), as_system(team_b, "team_b")
    records: list[Row] = rows.to_dict("records")
    for k, row in enumerate(records):
        for side, s in (("a", a), ("b", b)):
            if row[f"system_{side}"] != s.name:
                raise EvalError(
                    f"games: row {k} (game {row['game']}) has system_{side} "
                    f"{row[f'system_{side}']!r}, but team_{side} is {s.name!r}"
                )
    settings = _settings(env_kwargs, rows)
    custom = {} if maps is None else {s.content_hash: s for s in resolve_maps(maps)}
    specs = [_map_of(row, k, custom) for k, row in enumerate(records)]
    groups: dict[tuple[int, int, int], list[int]] = {}
    for k, row in enumerate(records):
        groups.setdefault((row["seed"], row["tick_limit"], row["winning_score"]), []).append(k)
    out: dict[int, Replay] = {}
    for ks in groups.values():
        size = _batch(len(ks), records[ks[0]]["tick_limit"])
        for i in range(0, len(ks), size):
            part = ks[i : i + size]
            played = _record_batch(part, records, specs, size, (a, b), settings)
            out |= dict(zip(part, played, strict=True))
    return [out[k] for k in range(len(records))]


def _record_batch(
    ks: list[int], records: list[Row], specs: list[MapSpec], size: int,
    teams: tuple[System, System], settings: dict[str, Any],
) -> list[Replay]:  # fmt: skip
    """Record rows `ks` (sharing seed and limits) in one compiled batch of `size` games."""
    rows, maps = [records[k] for k in ks], [specs[k] for k in ks]
    first, pad = rows[0], np.minimum(np.arange(size), len(rows) - 1)
    unique = {s.content_hash: s for s in maps}
    hashes = list(unique)
    pairs = list(dict.fromkeys((r["roster_a"], r["roster_b"]) for r in rows))
    limits = {k: first[k] for k in FROM_ROWS}
    try:
        env = marl_bgs.make(
            "tdm", map_id=list(unique.values()), rosters=pairs, num_envs=size, **limits, **settings
        )
    except ConfigError as err:
        raise EvalError(str(err)) from None
    env = cast(TDMEnv, env)
    starts = env.start_games(
        np.asarray([hashes.index(s.content_hash) for s in maps])[pad],
        np.asarray([pairs.index((r["roster_a"], r["roster_b"])) for r in rows])[pad],
        np.asarray([r["a_spawn"] == "right" for r in rows])[pad],
    )
    column = lambda c: jnp.asarray(np.asarray([r[c] for r in rows])[pad], jnp.int32)  # noqa: E731
    run = _recorder(size, first["tick_limit"], env.shared_sight, *teams)
    final, per_tick = run(starts, column("seed_number"), column("game"), root_key(first["seed"]))
    per_tick, starts, final = jax.tree.map(
        np.asarray, (per_tick, named_leaves("state", starts), named_leaves("state", final))
    )
    replays = []
    for i, (k, row) in enumerate(zip(ks, rows, strict=True)):
        one = lambda named, i=i: {n: v[i] for n, v in named.items()}  # noqa: E731
        per_game = {n: v[:, i] for n, v in per_tick.items()}
        replay = assemble(row, maps[i], teams, env.shared_sight, one(starts), per_game, one(final))
        _check_outcome(replay, row, k)
        replays.append(replay)
    return replays


def assemble(
    row: Row, spec: MapSpec, teams: tuple[System, System], shared_sight: bool,
    start: dict[str, np.ndarray], per_tick: dict[str, np.ndarray], final: dict[str, np.ndarray],
) -> Replay:  # fmt: skip
    """One game's `Replay` from its row (identity), its start and final state (`named_leaves`
    of one game) and its `tick_record`s stacked over at least the ticks it lasted [T, ...]."""
    length = int(final["state.tick"])
    arrays = {}
    for name, first in start.items():
        if is_static(name):
            arrays[name] = first
        else:
            arrays[name] = np.concatenate([per_tick[name], final[name][None]])[: length + 1]
    arrays |= {n: v[:length] for n, v in per_tick.items() if not n.startswith("state.")}
    arrays = {n: np.array(v, order="C") for n, v in arrays.items()}
    return Replay(header=_header(row, spec, teams, shared_sight, arrays), arrays=arrays)


def _header(
    row: Row, spec: MapSpec, teams: tuple[System, System], shared_sight: bool,
    arrays: dict[str, np.ndarray],
) -> dict[str, Any]:  # fmt: skip
    """A replay's header: the row's identity and the outcome the arrays hold."""
    a, b = teams
    score, ticks = arrays["state.score"][-1], arrays["state.tick"][-1]
    return {
        "format": FORMAT, "engine": marl_bgs.__version__, "mode": mode_id(),
        "game": int(row["game"]), "seed": int(row["seed"]), "seed_number": int(row["seed_number"]),
        "map": spec.record_id, "map_name": spec.name, "map_hash": spec.content_hash,
        "a_spawn": str(row["a_spawn"]), "system_a": a.name, "system_b": b.name,
        "leaves_a": list(a.leaves), "leaves_b": list(b.leaves),
        "roster_a": str(row["roster_a"]), "roster_b": str(row["roster_b"]),
        "result": RESULT_OF_OUTCOME.get(int(arrays["state.outcome"][-1]), "unfinished"),
        "points_a": int(score[0]), "points_b": int(score[1]), "ticks": int(ticks),
        **{k: arrays[f"state.rules.{k}"].item() for k in LIMITS}, "shared_sight": shared_sight,
    }  # fmt: skip


def _check_outcome(replay: Replay, row: Row, k: int) -> None:
    """Recording never changes a game: it must end as its results row says."""
    keys = ("result", "points_a", "points_b", "ticks")
    got, want = [replay.header[c] for c in keys], [row[c] for c in keys]
    if got != want:
        raise EvalError(
            f"games: row {k} (game {row['game']}) ended {dict(zip(keys, got, strict=True))} when "
            f"recorded, but its row says {dict(zip(keys, want, strict=True))}: record with the "
            "Systems and settings (shared_sight, red_zone_depth, ...) the evaluation used"
        )


# --- reading a replay -------------------------------------------------------------------------


def _check(replay: Replay) -> None:
    """`check_replay`, and the replay must be of this engine's Team Deathmatch."""
    check_replay(replay)
    if replay.header["mode"] != mode_id():
        raise EvalError(
            f"replay: mode {replay.header['mode']!r}; these tools read {mode_id()!r} replays "
            "(`marl_bgs_eval.replay_files.load` opens every mode's)"
        )


def _index(value: Any, high: int, field: str) -> int:
    return check_int(value, field, 0, high, error=EvalError)


def oracle(replay: Replay, tick: int) -> GameState:
    """The whole state before tick `tick` (0 .. ticks; `ticks` is the final state), numpy."""
    t = _index(tick, replay.ticks, "tick")
    names = [k for k in layout(0) if k.startswith("state.")]
    leaves = [replay.arrays[k] if is_static(k) else replay.arrays[k][t] for k in names]
    return jax.tree.unflatten(state_structure(), leaves)


def pov(replay: Replay, slot: int, tick: int) -> Pov:
    """What agent `slot` (0-4 team A, 5-9 team B) had when it decided at tick `tick` (0 ..
    ticks - 1): its permitted structured view (`env.views` with the game's shared sight) and
    the action mask its System was given. It holds nothing the agent could not see."""
    t = _index(tick, replay.ticks - 1, "tick")
    s = _index(slot, 9, "slot")
    masks = {
        k.removeprefix("masks."): v[t, s]
        for k, v in replay.arrays.items()
        if k.startswith("masks.")
    }
    return Pov(view=view(replay, s, t), mask=ActionMasks(**masks))


def view(replay: Replay, slot: int, tick: int) -> AgentView:
    """Agent `slot`'s permitted view of the state before tick `tick` (0 .. ticks; the final
    state too), as `env.views` builds it with the game's shared sight (numpy)."""
    t = _index(tick, replay.ticks, "tick")
    s = _index(slot, 9, "slot")
    env = engine_env(bool(replay.header["shared_sight"]))
    batch = jax.tree.map(lambda x: x[None], oracle(replay, t))
    return jax.tree.map(lambda x: np.asarray(x[0, s]), env.views(batch))


@functools.cache
def _stepper(ticks: int, shared_sight: bool) -> Callable:
    """The jitted `run(start, actions [ticks, 10, 3]) -> per-tick (states, masks, facts)`."""
    env = engine_env(shared_sight)

    def run(start: GameState, actions: jax.Array) -> dict[str, jax.Array]:
        def tick(state: GameState, act: jax.Array) -> tuple[GameState, dict[str, jax.Array]]:
            _, nxt, _, _, info = env.step(jax.random.key(0), state, act[None])
            made = {**named_leaves("state", nxt), **named_leaves("masks", env.action_masks(state))}
            return nxt, made | named_leaves("facts", info["facts"])

        return jax.lax.scan(tick, jax.tree.map(lambda x: x[None], start), actions)[1]

    return jax.jit(run)


def verify(replay: Replay) -> None:
    """Replay the recorded actions through the engine's `step` from the recorded start state;
    raise EvalError at the first recorded state, mask or fact it does not reproduce exactly."""
    _check(replay)
    h, n = replay.header, replay.ticks
    actions = np.zeros((h["tick_limit"], *replay.arrays["actions"].shape[1:]), np.int32)
    actions[:n] = replay.arrays["actions"]
    out = _stepper(h["tick_limit"], h["shared_sight"])(oracle(replay, 0), actions)
    first = []  # (tick, name) of each array's first difference
    for name, made in out.items():
        made, want = np.asarray(made)[:n, 0], replay.arrays[name]
        if is_static(name):
            want = np.broadcast_to(want, made.shape)
        elif name.startswith("state."):
            want = want[1:]  # the state after each tick
        bad = [t for t in range(n) if not np.array_equal(made[t], want[t])]
        first += [(bad[0], name)] if bad else []
    if first:
        t, name = min(first)
        raise EvalError(
            f"replay of game {h['game']}: tick {t}: {name} differs from what the engine's step "
            f"gives (the replay was edited, or engine {marl_bgs.__version__} plays otherwise than "
            f"{h['engine']})"
        )


def summary(replay: Replay) -> pd.DataFrame:
    """One row per tick played: tick (after it), both scores, living agents and deaths."""
    a = replay.arrays
    alive, died = a["state.units.alive"][1:], a["facts.died"]
    return pd.DataFrame(
        {
            "tick": a["state.tick"][1:],
            "score_a": a["state.score"][1:, 0],
            "score_b": a["state.score"][1:, 1],
            "alive_a": alive[:, :5].sum(1),
            "alive_b": alive[:, 5:].sum(1),
            "deaths_a": died[:, :5].sum(1),
            "deaths_b": died[:, 5:].sum(1),
        }
    ).astype("int64")


@functools.cache
def _tallier(level: str, ticks: int) -> Callable:
    """The jitted `run(states [T], facts [T], pairs [T, 10, 11, 2]) -> counters [T, width]`,
    summed up to each tick by evaluation's own `metrics.tally`."""

    def run(states: GameState, facts: Facts, pairs: jax.Array) -> jax.Array:
        def tick(memory: Any, x: tuple[GameState, Facts, jax.Array]) -> tuple[Any, jax.Array]:
            before, step, pair = jax.tree.map(lambda a: a[None], x)
            added, memory = mt.tally(level, before, step, pair, memory)
            return memory, added[0]

        added = jax.lax.scan(tick, mt.fresh_memory(1), (states, facts, pairs), length=ticks)[1]
        return jnp.cumsum(added, axis=0)

    return jax.jit(run)


def metrics(replay: Replay, level: str = "full") -> pd.DataFrame:
    """The game's metric columns (as evaluation records them at `level`) summed up to each tick:
    one row per tick played, `tick` (after it) first. The last row equals the game's results row;
    "full" holds who did what to whom (`damage_done.a0>b3.basic`, ...)."""
    try:
        mt.check_level(level)
    except EvalError as err:
        raise EvalError(str(err).replace("metrics:", "level:", 1)) from None
    _check(replay)
    n, limit = replay.ticks, int(replay.header["tick_limit"])
    pad = lambda a: np.concatenate([a, np.zeros((limit - n, *a.shape[1:]), a.dtype)])  # noqa: E731
    arrays = replay.arrays
    names = [k for k in layout(0) if k.startswith("state.")]
    leaves = [
        np.broadcast_to(arrays[k], (limit, *arrays[k].shape))
        if is_static(k)
        else pad(arrays[k][:n])
        for k in names
    ]
    states = jax.tree.unflatten(state_structure(), leaves)
    fields: dict[str, Any] = {
        k.removeprefix("facts."): pad(v) for k, v in arrays.items() if k.startswith("facts.")
    }
    facts = Facts(**fields)
    counters = np.asarray(_tallier(level, limit)(states, facts, pad(arrays["masks.pair"])))[:n]
    table = pd.DataFrame(counters, columns=mt.columns(level))
    table.insert(0, "tick", np.arange(1, n + 1))
    return table
