"""`evaluate`: mirrored, spawn-swapped pairs of games between two Systems, one row per game."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.experimental import multihost_utils
from jax.sharding import Mesh

from marl_bgs import BatchedEnv, ConfigError, ModeKit
from marl_bgs.core.env import available_memory, game_state_bytes
from marl_bgs_eval import modes, results
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.modes import LEVELS, EvalParts, Layout
from marl_bgs_eval.play import Plan, programs
from marl_bgs_eval.progress import progress_bar
from marl_bgs_eval.registry import get_system
from marl_bgs_eval.seeds import root_key, start_keys
from marl_bgs_eval.systems import System
from marl_bgs_eval.watch import INIT_END, INIT_START, TICK_END, TICK_START, Watch

INT32_MAX = 2**31 - 1


def resolve_maps(maps: Any, split: str | None = None, mode: str = "tdm") -> list[Any]:
    """The layouts to play, in order (Team Deathmatch: `MapSpec`s from split names, shipped ids
    or names, map files or MapSpecs; other modes: their `Layouts.select` texts or indices)."""
    k, p = modes.kit(mode), modes.parts(mode)
    return [layout.ref for layout in p.layouts(k, maps, split)]


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


def as_system(obj: System | str, field: str, mode: str | None = None) -> System:
    """A System, or a registered System's name; with `mode`, the System for that mode (a
    mode-generic System such as random adapts; another mode's System is an error)."""
    if isinstance(obj, str):
        try:
            obj = get_system(obj)
        except EvalError as err:
            raise EvalError(f"{field}: {err}") from None
    if not isinstance(obj, System):
        raise EvalError(
            f"{field}: expected a System or a registered name, got {type(obj).__name__}"
        )
    if mode is None:
        return obj
    try:
        return obj.for_mode(mode)
    except EvalError as err:
        raise EvalError(f"{field}: {err}") from None


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
    schedule: same mode, seed, Systems, maps, rosters, spawn ends and limits), or None."""
    if resume is None or len(resume) == 0:
        return None
    resume = results.validate(resume, "resume", complete=False)
    key = list(expected.columns)
    merged = resume[key].merge(expected[key], how="left", indicator=True)
    stray = cast(pd.Series, merged["_merge"]) != "both"
    if stray.any():
        g = int(merged.loc[stray, "game"].iat[0])
        raise EvalError(
            f"resume: game {g} is not a game of this evaluation (different mode, seed, Systems, "
            "maps, rosters or limits?); resume only the run that wrote it"
        )
    return resume


def default_maps(kit: ModeKit) -> str:
    """What `evaluate` plays when no maps are given: the test split, or every layout."""
    return "test" if kit.layouts is not None and "test" in kit.layouts.splits else "all"


def evaluate(
    team_a: System | str,
    team_b: System | str | None = None,
    *,
    mode: str = "tdm",
    maps: Any = None,
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
    """Play `games_per_map` games per map (and roster pair) of `mode` (an id or alias, e.g.
    "tdm" or "two-bridge"), team A vs team B; a mode whose second team it plays itself
    (Two-Bridge's enemies) takes no `team_b`.

    Games come in pairs that share a map and a seed number and swap spawn ends. `maps`: the
    mode's layouts (Team Deathmatch: split names, shipped ids or names, map files or MapSpecs;
    any mode: a `Layouts.select` text such as "0-3" or "all"; default: the test split, else
    all). `env_kwargs` are the mode's own settings (`winning_score`, `tick_limit`, ...). Returns
    one row per game (`marl_bgs_eval.results.columns(mode)`, the mode a column), sorted by game
    number, with the metric columns of `metrics` ("none", "priority" or "full": see the mode's
    metric families). `order` (a permutation of the schedule) only changes which games share the
    device at a time, never a result. `on_games(frame)` receives finished games as they end (to
    save them at once); `resume` takes the games an interrupted run already finished and plays
    only the rest. `mesh` (a `jax.sharding.Mesh`) splits each batch's games over its devices
    (first axis; the batch size must divide evenly); the games and results are the same as on
    one device. `watch(event, tick)` is told on the host as each tick starts and ends
    (`marl_bgs_eval.watch`: how the tournament's sandbox times a program); the programs are
    compiled first, the games are played one tick per call and no mesh is used.
    """
    kit, parts = modes.kit(mode), modes.parts(mode)
    teams = teams_of(kit, parts, team_a, team_b)
    layouts = parts.layouts(kit, default_maps(kit) if maps is None else maps, split)
    per_map = _positive(games_per_map, "games_per_map", even=True)
    batch = _positive(batch_size, "batch_size")
    chunk = _positive(chunk_ticks, "chunk_ticks")
    if metrics not in LEVELS:
        raise EvalError(f"metrics: expected one of {list(LEVELS)}, got {metrics!r}")
    level = metrics
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63:
        raise EvalError(f"seed: expected a non-negative integer, got {seed!r}")
    if env_kwargs.get("message_dim", 0):
        raise EvalError("message_dim: evaluation does not carry messages yet; use 0")
    if on_games is not None and not callable(on_games):
        raise EvalError(f"on_games: expected a callable, got {type(on_games).__name__}")
    groups = shape_groups(kit, layouts)
    envs = [
        _env(kit, parts, [layouts[i] for i in g], batch, rosters, mesh, env_kwargs) for g in groups
    ]
    roster_texts = parts.rosters(envs[0])
    for env in envs:
        for k in range(len(roster_texts)):
            for t, s in enumerate(teams):
                reason = parts.problem(env, k, t, s)
                if reason:
                    raise EvalError(f"rosters[{k}] (team_{'ab'[t]}): {reason}")
    first_seed = _count(first_seed_number, "first_seed_number")
    first = _count(first_game, "first_game")
    n_all = len(layouts) * len(roster_texts) * per_map
    _check_schedule_fits(envs[0], n_all, batch, first_seed, first)
    sched = schedule(len(layouts), len(roster_texts), per_map, first_seed, first)
    perm = np.arange(n_all) if order is None else np.asarray(order)
    if perm.shape != (n_all,) or not np.array_equal(np.sort(perm), np.arange(n_all)):
        raise EvalError(f"order: expected a permutation of the {n_all} scheduled games")
    meta = {"seed": int(seed), **parts.meta(envs[0])}
    names = tuple(s.name for s in teams)
    expected = _identities(kit.id, sched, names, parts, layouts, roster_texts, meta)
    earlier = _previous(resume, expected)
    if earlier is not None:
        perm = perm[~np.isin(sched["game"].to_numpy()[perm], earlier["game"].to_numpy())]
    frames = [] if earlier is None else [earlier]
    map_index = sched["map_index"].to_numpy()
    for group, env in zip(groups, envs, strict=True):
        rows = perm[np.isin(map_index[perm], group)]
        local = np.full(len(layouts), -1)
        local[group] = np.arange(len(group))
        played = play_schedule(
            env, parts, sched, rows, teams, level, meta, batch, chunk, progress, on_games, mesh,
            watch, layouts=layouts, rosters=roster_texts, local=local,
        )  # fmt: skip
        if played is not None and len(played):
            frames.append(played)
    games = pd.concat(frames, ignore_index=True).sort_values("game", kind="stable")
    return results.normalize(games)


def teams_of(
    kit: ModeKit, parts: EvalParts, team_a: System | str, team_b: System | str | None
) -> tuple[System, ...]:
    """The Systems of the teams the mode lets Systems play: team A, and team B unless the mode
    plays it itself (then `team_b` must be None); EvalError naming what is wrong."""
    systems = [as_system(team_a, "team_a", kit.id)]
    if kit.controlled_teams == 2:
        if team_b is None:
            raise EvalError(f"team_b: mode {kit.id!r} has two teams; give team B's System")
        systems.append(as_system(team_b, "team_b", kit.id))
    elif team_b is not None:
        raise EvalError(
            f"team_b: mode {kit.id!r} plays team B itself ({parts.opponent!r}); give no team_b"
        )
    return tuple(systems)


def shape_groups(kit: ModeKit, layouts: list[Layout]) -> list[list[int]]:
    """Positions in `layouts` (each layout listed once) cut into sets that share array shapes
    (one env, one program)."""
    if kit.layouts is None or kit.layouts.group is None:  # one group (custom maps share id -1)
        return [list(range(len(layouts)))]
    ids = [layout.id for layout in layouts]  # the mode's layout indices, each listed once
    return [[ids.index(i) for i in group] for group in kit.layouts.shape_groups(ids)]


def _env(
    kit: ModeKit, parts: EvalParts, layouts: list[Layout], batch: int, rosters: Any,
    mesh: Mesh | None, settings: dict[str, Any],
) -> BatchedEnv:  # fmt: skip
    try:
        return parts.build(kit, layouts, batch, rosters, mesh, settings)
    except ConfigError as err:
        raise EvalError(str(err).replace("num_envs:", "batch_size:", 1)) from None


def _identities(
    mode: str, sched: pd.DataFrame, names: tuple[str, ...], parts: EvalParts,
    layouts: list[Layout], rosters: list[tuple[str, ...]], meta: dict[str, int],
) -> pd.DataFrame:  # fmt: skip
    """What identifies each scheduled game in a results row (for checking resumed games)."""
    m, r = sched["map_index"].to_numpy(), sched["roster_index"].to_numpy()
    cols: dict[str, Any] = {
        "game": sched["game"],
        "seed": meta["seed"],
        "mode": mode,
        "system_a": names[0],
        "system_b": names[1] if len(names) > 1 else parts.opponent,
        "map_hash": [layouts[k].hash for k in m],
        "a_spawn": np.where(sched["swap"], "right", "left"),
        "seed_number": sched["seed_number"],
        "tick_limit": meta["tick_limit"],
    }
    cols |= parts.identity(r, rosters, meta)
    return results.normalize(pd.DataFrame(cols), add_mode=False)


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
    env: BatchedEnv, parts: EvalParts, sched: pd.DataFrame, rows: np.ndarray,
    teams: tuple[System, ...], level: str, meta: dict[str, int], batch: int, chunk: int,
    progress: bool, on_games: Callable[[pd.DataFrame], None] | None, mesh: Mesh | None,
    watch: Watch | None = None, *, layouts: list[Layout], rosters: list[tuple[str, ...]],
    local: np.ndarray | None = None,
) -> pd.DataFrame | None:  # fmt: skip
    """Play the scheduled games `rows` (schedule indices, in device order; `sched`'s map_index
    points into `layouts`, and `local[map_index]` into the env's own list if it plays only some
    of them); report each batch of finished games to `on_games` as it ends; return them all
    (None if there were none)."""
    n = len(rows)
    if n == 0:
        return None
    g_pad = padded_length(n, batch)
    padded = rows[np.minimum(np.arange(g_pad), n - 1)]
    pick = {c: sched[c].to_numpy()[padded] for c in ("map_index", "roster_index", "swap")}
    if local is not None:
        pick["map_index"] = local[pick["map_index"]]
    seeds = sched["seed_number"].to_numpy()[padded]
    starts = start_keys(root_key(meta["seed"]), jnp.asarray(seeds, jnp.int32))
    blocks = [
        parts.start_games(
            env,
            jnp.asarray(pick["map_index"][i : i + batch]),
            jnp.asarray(pick["roster_index"][i : i + batch]),
            jnp.asarray(pick["swap"][i : i + batch]),
            starts[i : i + batch],
        )
        for i in range(0, g_pad, batch)
    ]
    plan = Plan(
        starts=jax.tree.map(lambda *xs: jnp.concatenate(xs), *blocks),
        seed_number=jnp.asarray(sched["seed_number"].to_numpy()[padded], jnp.int32),
        game_number=jnp.asarray(sched["game"].to_numpy()[padded], jnp.int32),
        n_games=jnp.int32(n),
        root=root_key(meta["seed"]),
        params=tuple(s.params for s in teams),
    )
    if watch is None:
        start, run = programs(env, parts, teams, level, chunk, mesh)
        carry = start(plan)
    else:
        start, run = _compiled(*programs(env, parts, teams, level, 1, None), plan)
        watch(INIT_START, 0)
        carry = jax.block_until_ready(start(plan))
        watch(INIT_END, 0)
    reported = np.zeros(g_pad, bool)
    frames = []
    label = " vs ".join(s.name for s in teams)
    with progress_bar(progress, n, label) as show:
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
                out = jax.tree.map(lambda x, i=idx: _host(x)[i], carry.out)  # host (numpy) copy
                games = results.frame(
                    env.spec.id, sched.iloc[rows[idx]], out, teams, layouts, rosters, level, meta
                )
                frames.append(games)
                if on_games is not None:
                    on_games(games)
            ticks = _host(carry.state.tick)[_host(carry.slot_game) >= 0]
            finished = int(reported.sum())
            show(finished + float(np.sum(np.minimum(ticks / meta["tick_limit"], 0.99))), finished)
    return pd.concat(frames, ignore_index=True)
