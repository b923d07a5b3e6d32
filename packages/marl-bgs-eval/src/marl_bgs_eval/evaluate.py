"""`evaluate`: mirrored, spawn-swapped pairs of games between two Systems, one row per game."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import marl_bgs
from marl_bgs.tdm.maps import MapError
from marl_bgs_eval import metrics as mt
from marl_bgs_eval import results
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.play import Plan, programs
from marl_bgs_eval.registry import get_system
from marl_bgs_eval.seeds import root_key
from marl_bgs_eval.systems import System

MapsLike = str | int | Sequence[int | str]


def resolve_maps(maps: MapsLike, split: str | None) -> list[int]:
    """Map ids from a split name, an id or a list; each checked against `split` if given."""
    try:
        if isinstance(maps, str) and maps in marl_bgs.maps.SPLITS:
            ids = marl_bgs.maps.split(maps)
        else:
            refs = [maps] if isinstance(maps, int | str) else list(maps)
            ids = [marl_bgs.maps.load(m).id for m in refs]
        allowed = None if split is None else set(marl_bgs.maps.split(split))
    except MapError as err:
        raise EvalError(f"maps: {err}") from None
    if not ids:
        raise EvalError("maps: expected at least one map")
    if allowed is not None:
        outside = [m for m in ids if m not in allowed]
        if outside:
            raise EvalError(f"maps: {outside} are not in split {split!r} ({sorted(allowed)})")
    return ids


def _positive(value: Any, field: str, even: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise EvalError(f"{field}: expected a positive integer, got {value!r}")
    if even and value % 2:
        raise EvalError(
            f"{field}: games come in spawn-swapped pairs, so it must be even; got {value}"
        )
    return int(value)


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
    **env_kwargs: Any,
) -> pd.DataFrame:
    """Play `games_per_map` games per map (and roster pair) between two Systems, team A vs B.

    Games come in pairs that share a map and a seed number and swap spawn ends. `env_kwargs` are
    the engine's rule keywords (`winning_score`, `tick_limit`, `shared_sight`, ...). Returns one
    row per game (see `marl_bgs_eval.results.COLUMNS`). `order` (a permutation of the schedule)
    only changes which games share the device at a time, never a result.
    """
    a, b = as_system(team_a, "team_a"), as_system(team_b, "team_b")
    map_ids = resolve_maps(maps, split)
    per_map = _positive(games_per_map, "games_per_map", even=True)
    batch = _positive(batch_size, "batch_size")
    chunk = _positive(chunk_ticks, "chunk_ticks")
    level = mt.check_level(metrics)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63:
        raise EvalError(f"seed: expected a non-negative integer, got {seed!r}")
    if env_kwargs.get("message_dim", 0):
        raise EvalError("message_dim: evaluation does not carry messages yet; use 0")
    env = marl_bgs.make("tdm", map_id=map_ids, num_envs=batch, rosters=rosters, **env_kwargs)
    roster_ids = np.asarray(env.rosters)
    for k, pair in enumerate(roster_ids):
        for side, s in (("team_a", a), ("team_b", b)):
            reason = s.problem(pair[:5] if side == "team_a" else pair[5:])
            if reason:
                raise EvalError(f"rosters[{k}] ({side}): {reason}")
    sched = schedule(len(map_ids), len(roster_ids), per_map, first_seed_number, first_game)
    n = len(sched)
    perm = np.arange(n) if order is None else np.asarray(order)
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        raise EvalError(f"order: expected a permutation of the {n} scheduled games")
    g_pad = batch * int(2 ** np.ceil(np.log2(max(1, -(-n // batch)))))
    rows = perm[np.minimum(np.arange(g_pad), n - 1)]
    blocks = [
        env.start_games(
            *(
                jnp.asarray(sched[c].to_numpy()[rows[i : i + batch]])
                for c in ("map_index", "roster_index", "swap")
            )
        )
        for i in range(0, g_pad, batch)
    ]
    plan = Plan(
        starts=jax.tree.map(lambda *xs: jnp.concatenate(xs), *blocks),
        seed_number=jnp.asarray(sched["seed_number"].to_numpy()[rows], jnp.int32),
        game_number=jnp.asarray(sched["game"].to_numpy()[rows], jnp.int32),
        n_games=jnp.int32(n),
        root=root_key(int(seed)),
    )
    start, run = programs(batch, env.shared_sight, a, b, level, chunk)
    carry = start(plan)
    with results.progress_bar(progress, n, f"{a.name} vs {b.name}") as advance:
        done = 0
        while done < n:
            carry = run(carry, plan)
            now = int(carry.n_done)
            advance(now - done)
            done = now
    inverse = np.argsort(perm)
    out = jax.tree.map(lambda x: np.asarray(x)[:n][inverse], jax.device_get(carry.out))
    meta = {
        "seed": int(seed),
        "tick_limit": int(env.rule_values.tick_limit),
        "winning_score": int(env.rule_values.winning_score),
    }
    return results.frame(sched, out, a, b, map_ids, roster_ids, level, meta)
