"""`evaluate`: mirrored, spawn-swapped pairs of games between two Systems, one row per game."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.experimental import multihost_utils
from jax.sharding import Mesh

import marl_bgs
from marl_bgs import ConfigError
from marl_bgs.core.env import available_memory, game_state_bytes
from marl_bgs.tdm.maps import SPLITS, MapSpec
from marl_bgs.tdm.maps import load as load_map
from marl_bgs.tdm.maps import split as split_ids
from marl_bgs_eval import metrics as mt
from marl_bgs_eval import results
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.play import Plan, programs
from marl_bgs_eval.progress import progress_bar
from marl_bgs_eval.registry import get_system
from marl_bgs_eval.seeds import root_key
from marl_bgs_eval.systems import System
from marl_bgs_eval.watch import INIT_END, INIT_START, TICK_END, TICK_START, Watch

INT32_MAX = 2**31 - 1
MapsLike = str | int | Path | MapSpec | Sequence[int | str | Path | MapSpec]


def resolve_maps(maps: MapsLike, split: str | None = None) -> list[MapSpec]:
    """The maps to play, in order: split names ("test"), shipped ids or names, map files
    (`.json` paths) or MapSpecs, alone or in a list; each checked against `split` if given.
    Maps are told apart by content, so a file whose id equals a shipped id plays its own map."""
    refs = [maps] if isinstance(maps, str | int | Path | MapSpec) else maps
    if isinstance(refs, np.ndarray):
        refs = refs.tolist()
    if not isinstance(refs, Sequence) or isinstance(refs, str):
        raise EvalError(f"maps: expected a split name, a map or a list of them, got {maps!r}")
    specs: list[MapSpec] = []
    try:
        for ref in refs:
            if isinstance(ref, str) and ref in SPLITS:
                specs += [load_map(i) for i in split_ids(ref)]
            else:
                specs.append(load_map(ref))
        allowed = None if split is None else set(split_ids(split))
    except ConfigError as err:
        raise EvalError(f"maps: {err}") from None
    if not specs:
        raise EvalError("maps: expected at least one map")
    hashes = [s.content_hash for s in specs]
    twice = sorted({s.name for s, h in zip(specs, hashes, strict=True) if hashes.count(h) > 1})
    if twice:
        raise EvalError(f"maps: {twice} listed more than once (maps are compared by content)")
    if allowed is not None:
        outside = [
            s.name if s.split == "custom" else s.id
            for s in specs
            if s.split == "custom" or s.id not in allowed
        ]
        if outside:
            raise EvalError(f"maps: {outside} are not in split {split!r} ({sorted(allowed)})")
    return specs


def _positive(value: Any, field: str, even: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise EvalError(f"{field}: expected a positive integer, got {value!r}")
    if even and value % 2:
        raise EvalError(
            f"{field}: games come in spawn-swapped pairs, so it must be even; got {value}"
        )
    return int(value)


def _count(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise EvalError(f"{field}: expected a non-negative integer, got {value!r}")
    return int(value)


def padded_length(n_games: int, batch: int) -> int:
    """Rows of the device schedule: whole batches, in power-of-two counts (few distinct shapes,
    so few compiled programs)."""
    return batch * 2 ** max(0, (-(-n_games // batch) - 1).bit_length())


def _check_schedule_fits(env: Any, n_games: int, batch: int, first_seed: int, first: int) -> None:
    """Game and seed numbers are int32 on the device, and every scheduled game's start state
    stays there while the batch plays: refuse what cannot fit, before building anything."""
    if first + n_games > INT32_MAX or first_seed + n_games // 2 > INT32_MAX:
        raise EvalError(
            f"games_per_map: {n_games} games from game {first} (seed number {first_seed}) "
            f"exceed the int32 numbering (at most {INT32_MAX})"
        )
    need = padded_length(n_games, batch) * game_state_bytes(env.pool)
    have = available_memory() // 2
    if need > have:
        raise EvalError(
            f"games_per_map: {n_games} scheduled games need {need / 2**30:.1f} GiB for their start "
            f"states, more than half the {2 * have / 2**30:.1f} GiB of device memory; split the "
            "evaluation into runs with first_seed_number and first_game"
        )


def as_system(obj: System | str, field: str) -> System:
    """A System, or a registered System's name."""
    if isinstance(obj, str):
        try:
            return get_system(obj)
        except EvalError as err:
            raise EvalError(f"{field}: {err}") from None
    if not isinstance(obj, System):
        raise EvalError(
            f"{field}: expected a System or a registered name, got {type(obj).__name__}"
        )
    return obj


def schedule(
    n_maps: int, n_rosters: int, games_per_map: int, first_seed_number: int, first_game: int
) -> pd.DataFrame:
    """The fixed list of games: per roster pair and map, pairs sharing a seed number that swap
    spawn ends (the first game of a pair has team A on the left)."""
    pairs = games_per_map // 2
    r, m, _p, s = np.meshgrid(
        np.arange(n_rosters), np.arange(n_maps), np.arange(pairs), np.arange(2), indexing="ij"
    )
    r, m, s = r.ravel(), m.ravel(), s.ravel().astype(bool)
    pair = np.arange(r.size) // 2 + first_seed_number
    return pd.DataFrame(
        {
            "roster_index": r,
            "map_index": m,
            "swap": s,
            "seed_number": pair,
            "game": np.arange(r.size) + first_game,
        }
    )


def _previous(resume: pd.DataFrame | None, expected: pd.DataFrame) -> pd.DataFrame | None:
    """Games of an earlier, interrupted run of the same evaluation (checked against the
    schedule: same seed, Systems, maps, rosters, spawn ends and limits), or None."""
    if resume is None or len(resume) == 0:
        return None
    resume = results.validate(resume, "resume", complete=False)
    key = ["game", "seed", "system_a", "system_b", "map_hash", "roster_a", "roster_b",
           "a_spawn", "seed_number", "tick_limit", "winning_score"]  # fmt: skip
    merged = resume[key].merge(expected[key], how="left", indicator=True)
    stray = cast(pd.Series, merged["_merge"]) != "both"
    if stray.any():
        g = int(merged.loc[stray, "game"].iat[0])
        raise EvalError(
            f"resume: game {g} is not a game of this evaluation (different seed, Systems, maps, "
            "rosters or limits?); resume only the run that wrote it"
        )
    return resume


def evaluate(
    team_a: System | str,
    team_b: System | str,
    *,
    maps: MapsLike = "test",
    games_per_map: int = 40,
    seed: int = 0,
    rosters: Any = None,
    metrics: str = "priority",
    batch_size: int = 128,
    split: str | None = None,
    first_seed_number: int = 0,
    first_game: int = 0,
    chunk_ticks: int = 64,
    progress: bool = False,
    order: Sequence[int] | None = None,
    on_games: Callable[[pd.DataFrame], None] | None = None,
    resume: pd.DataFrame | None = None,
    mesh: Mesh | None = None,
    watch: Watch | None = None,
    **env_kwargs: Any,
) -> pd.DataFrame:
    """Play `games_per_map` games per map (and roster pair) between two Systems, team A vs B.

    Games come in pairs that share a map and a seed number and swap spawn ends. `maps`: split
    names, shipped ids or names, map files or MapSpecs (see `resolve_maps`). `env_kwargs` are the
    engine's rule keywords (`winning_score`, `tick_limit`, `shared_sight`, ...). Returns one row
    per game (see `marl_bgs_eval.results.COLUMNS`), sorted by game number, with the metric
    columns of `metrics` ("none", "priority" or "full": see `marl_bgs_eval.metrics`). `order` (a
    permutation of the schedule) only changes which games share the device at a time, never a
    result. `on_games(frame)` receives finished games as they end (to save them at once);
    `resume` takes the games an interrupted run already finished and plays only the rest.
    `mesh` (a `jax.sharding.Mesh`) splits each batch's games over its devices (first axis; the
    batch size must divide evenly); the games and results are the same as on one device.
    `watch(event, tick)` is told on the host as each tick starts and ends (`marl_bgs_eval.watch`:
    how the tournament's sandbox times a program); the programs are compiled first, the games
    are played one tick per call and no mesh is used.
    """
    a, b = as_system(team_a, "team_a"), as_system(team_b, "team_b")
    specs = resolve_maps(maps, split)
    per_map = _positive(games_per_map, "games_per_map", even=True)
    batch = _positive(batch_size, "batch_size")
    chunk = _positive(chunk_ticks, "chunk_ticks")
    level = mt.check_level(metrics)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63:
        raise EvalError(f"seed: expected a non-negative integer, got {seed!r}")
    if env_kwargs.get("message_dim", 0):
        raise EvalError("message_dim: evaluation does not carry messages yet; use 0")
    if on_games is not None and not callable(on_games):
        raise EvalError(f"on_games: expected a callable, got {type(on_games).__name__}")
    try:
        env = marl_bgs.make(
            "tdm", map_id=specs, num_envs=batch, rosters=rosters, mesh=mesh, **env_kwargs
        )
    except ConfigError as err:
        raise EvalError(str(err).replace("num_envs:", "batch_size:", 1)) from None
    roster_ids = np.asarray(env.rosters)
    for k, pair in enumerate(roster_ids):
        for side, s in (("team_a", a), ("team_b", b)):
            reason = s.problem(pair[:5] if side == "team_a" else pair[5:])
            if reason:
                raise EvalError(f"rosters[{k}] ({side}): {reason}")
    first_seed = _count(first_seed_number, "first_seed_number")
    first = _count(first_game, "first_game")
    n_all = len(specs) * len(roster_ids) * per_map
    _check_schedule_fits(env, n_all, batch, first_seed, first)
    sched = schedule(len(specs), len(roster_ids), per_map, first_seed, first)
    perm = np.arange(n_all) if order is None else np.asarray(order)
    if perm.shape != (n_all,) or not np.array_equal(np.sort(perm), np.arange(n_all)):
        raise EvalError(f"order: expected a permutation of the {n_all} scheduled games")
    meta = {
        "seed": int(seed),
        "tick_limit": int(env.rule_values.tick_limit),
        "winning_score": int(env.rule_values.winning_score),
    }
    earlier = _previous(resume, _identities(sched, a, b, specs, roster_ids, meta))
    if earlier is not None:
        perm = perm[~np.isin(sched["game"].to_numpy()[perm], earlier["game"].to_numpy())]
    played = play_schedule(
        env, sched, perm, (a, b), level, meta, batch, chunk, progress, on_games, mesh, watch
    )
    frames = [f for f in (earlier, played) if f is not None and len(f)]
    games = pd.concat(frames, ignore_index=True).sort_values("game", kind="stable")
    return results.normalize(games)


def _identities(
    sched: pd.DataFrame, a: System, b: System, specs: list[MapSpec], rosters: np.ndarray,
    meta: dict[str, int],
) -> pd.DataFrame:  # fmt: skip
    """What identifies each scheduled game in a results row (for checking resumed games)."""
    m, r = sched["map_index"].to_numpy(), sched["roster_index"].to_numpy()
    return results.normalize(
        pd.DataFrame(
            {
                "game": sched["game"],
                "seed": meta["seed"],
                "system_a": a.name,
                "system_b": b.name,
                "map_hash": [specs[k].content_hash for k in m],
                "roster_a": [results.roster_text(rosters[k][:5]) for k in r],
                "roster_b": [results.roster_text(rosters[k][5:]) for k in r],
                "a_spawn": np.where(sched["swap"], "right", "left"),
                "seed_number": sched["seed_number"],
                "tick_limit": meta["tick_limit"],
                "winning_score": meta["winning_score"],
            }
        )
    )


def _host(x: jax.Array) -> np.ndarray:
    """A device array's value on this host: whole when this process holds all of it, else
    gathered from every process (a collective: all processes run the same loop)."""
    if x.is_fully_addressable:
        return np.asarray(x)
    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def _compiled(start: Any, run: Any, plan: Plan) -> tuple[Callable, Callable]:
    """The two (jitted) programs compiled ahead, so no timed tick includes compiling."""
    carry = jax.eval_shape(start, plan)
    return start.lower(plan).compile(), run.lower(carry, plan).compile()


def play_schedule(
    env: Any, sched: pd.DataFrame, rows: np.ndarray, teams: tuple[System, System], level: str,
    meta: dict[str, int], batch: int, chunk: int, progress: bool,
    on_games: Callable[[pd.DataFrame], None] | None, mesh: Mesh | None,
    watch: Watch | None = None,
) -> pd.DataFrame | None:  # fmt: skip
    """Play the scheduled games `rows` (schedule indices, in device order); report each batch
    of finished games to `on_games` as it ends; return them all (None if there were none)."""
    n = len(rows)
    if n == 0:
        return None
    a, b = teams
    g_pad = padded_length(n, batch)
    padded = rows[np.minimum(np.arange(g_pad), n - 1)]
    pick = {c: sched[c].to_numpy()[padded] for c in ("map_index", "roster_index", "swap")}
    blocks = [
        env.start_games(*(jnp.asarray(pick[c][i : i + batch]) for c in pick))
        for i in range(0, g_pad, batch)
    ]
    plan = Plan(
        starts=jax.tree.map(lambda *xs: jnp.concatenate(xs), *blocks),
        seed_number=jnp.asarray(sched["seed_number"].to_numpy()[padded], jnp.int32),
        game_number=jnp.asarray(sched["game"].to_numpy()[padded], jnp.int32),
        n_games=jnp.int32(n),
        root=root_key(meta["seed"]),
        params=(a.params, b.params),
    )
    if watch is None:
        start, run = programs(batch, env.shared_sight, a, b, level, chunk, mesh)
        carry = start(plan)
    else:
        start, run = _compiled(*programs(batch, env.shared_sight, a, b, level, 1, None), plan)
        watch(INIT_START, 0)
        carry = jax.block_until_ready(start(plan))
        watch(INIT_END, 0)
    reported = np.zeros(g_pad, bool)
    frames = []
    with progress_bar(progress, n, f"{a.name} vs {b.name}") as show:
        while int(_host(carry.n_done)) < n:
            if watch is None:
                carry = run(carry, plan)
            else:
                tick = int(np.max(_host(carry.state.tick)))
                watch(TICK_START, tick)
                carry = jax.block_until_ready(run(carry, plan))
                watch(TICK_END, tick)
            ended = (_host(carry.out.outcome) != 0) & ~reported
            ended[n:] = False
            if ended.any():
                idx = np.flatnonzero(ended)
                reported[idx] = True
                out = carry.out._make(_host(x)[idx] for x in carry.out)  # host (numpy) copy
                games = results.frame(
                    sched.iloc[rows[idx]], out, a, b, env.maps, env.rosters, level, meta
                )
                frames.append(games)
                if on_games is not None:
                    on_games(games)
            ticks = _host(carry.state.tick)[_host(carry.slot_game) >= 0]
            finished = int(reported.sum())
            show(finished + float(np.sum(np.minimum(ticks / meta["tick_limit"], 0.99))), finished)
    return pd.concat(frames, ignore_index=True)
