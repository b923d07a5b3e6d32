"""Replays of an evaluation's games, any mode: pick rows of `evaluate`'s results and get one
replay file per row, the game exactly as it was played there.

    games = ev.evaluate(team, mode="two-bridge", maps="V1_Base", games_per_map=4)
    replays = record_games(team, None, games.head(2))       # None: the mode plays team B
    replay_files.save(replays[0], "game-0.replay.zip")      # any mode's viewer opens it

`record_games` asks the mode's evaluation parts (`EvalParts.record_games`): Team Deathmatch
records in its own tick schema (`marl_bgs_eval.tdm.replays.record`); a mode whose replay schema is
`episode_replays.episode_schema()` is recorded here. Each picked game is rebuilt from its row
(layout, spawn ends, seed, seed number, game number), started by the mode's evaluation start
from the same start key, and played by evaluation's own `play_tick` with the same keys, all
picked games of a layout group in one compiled `lax.scan`; every game must end as its row says.
The file is an episode replay with a `row` (see `marl_bgs_eval.episode_replays`): `load`
redraws its start from that key and replays it through the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import marl_bgs
from marl_bgs import ConfigError, ModeKit
from marl_bgs_eval import episode_replays, results
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.evaluate import shape_groups, teams_of
from marl_bgs_eval.modes import EvalParts, Layout, kit, parts
from marl_bgs_eval.play import play_tick
from marl_bgs_eval.replay_files import FORMAT, named_leaves
from marl_bgs_eval.seeds import memory_keys, root_key, start_keys
from marl_bgs_eval.systems import System

__all__ = ["record_games"]

MAX_BATCH = 64  # games recorded at once


def record_games(
    team_a: System | str, team_b: System | str | None, games: pd.DataFrame, *,
    maps: Any = None, **settings: Any,
) -> list[Replay]:  # fmt: skip
    """Record the games of `games` (rows of one mode's `evaluate` results between these
    Systems; `team_b` None for a mode that plays team B itself), one replay per row in row
    order. `maps`: the evaluation's `maps` where they hold custom layouts (Team Deathmatch's
    map files); the rows name shipped layouts themselves. `settings` are the mode's keywords
    the evaluation was given (`tick_limit` comes from the rows). EvalError if a game does not
    end as its row says (other Systems or settings?)."""
    rows = results.validate(games, "games", complete=False)
    mode = results.mode_of(rows)
    given = settings if maps is None else {**settings, "maps": maps}
    return parts(mode).record_games(kit(mode), team_a, team_b, rows, given)


def _teams(
    k: ModeKit, p: EvalParts, team_a: Any, team_b: Any, rows: pd.DataFrame
) -> tuple[System, ...]:
    """The Systems, checked against each row's system_a and system_b."""
    teams = teams_of(k, p, team_a, team_b)
    names = [t.name for t in teams] + ([] if len(teams) == 2 else [p.opponent])
    for side, name in zip("ab", names, strict=True):
        bad = np.flatnonzero(rows[f"system_{side}"].to_numpy() != name)
        if bad.size:
            row = rows.iloc[int(bad[0])]
            raise EvalError(
                f"games: row {int(bad[0])} (game {row['game']}) has system_{side} "
                f"{row[f'system_{side}']!r}, but team_{side} is {name!r}"
            )
    return tuple(teams)


def record_rows(
    k: ModeKit, p: EvalParts, team_a: Any, team_b: Any, rows: pd.DataFrame,
    settings: dict[str, Any],
) -> list[Replay]:  # fmt: skip
    """`record_games` for a mode whose replays are episode replays (`EvalParts.record_games`'s
    default): rows already checked as one mode's results."""
    teams = _teams(k, p, team_a, team_b, rows)
    settings = dict(settings)
    shipped = settings.pop("maps", None)  # the rows name their layouts
    if shipped is not None and not all(isinstance(m, str | int) for m in _listed(shipped)):
        raise EvalError(f"maps: {k.id} has no custom layouts; the rows name the layouts played")
    if k.layouts is None:
        raise EvalError(f"games: mode {k.id!r} has no layouts; its games cannot be rebuilt")
    limits = rows["tick_limit"].to_numpy()
    if "tick_limit" in settings and np.any(limits != settings["tick_limit"]):
        raise EvalError(f"tick_limit: {settings['tick_limit']!r} differs from the games' column")
    names = rows["map_name"].astype(str).tolist()
    layouts = {name: p.layouts(k, [name], None)[0] for name in dict.fromkeys(names)}
    bad = [i for i, n in enumerate(names) if layouts[n].hash != rows["map_hash"].iloc[i]]
    if bad:
        raise EvalError(f"games: row {bad[0]} has map_hash {rows['map_hash'].iloc[bad[0]]}, "
                        f"not layout {names[bad[0]]!r} of {k.id}")  # fmt: skip
    groups: dict[tuple[Any, ...], list[int]] = {}
    unique = list(layouts.values())
    group_of = {unique[j].name: g for g, js in enumerate(shape_groups(k, unique)) for j in js}
    for i, (seed, limit) in enumerate(zip(rows["seed"].tolist(), limits.tolist(), strict=True)):
        groups.setdefault((seed, limit, group_of[names[i]]), []).append(i)
    out: dict[int, Replay] = {}
    for (seed, limit, _), picked in groups.items():
        for start in range(0, len(picked), MAX_BATCH):
            part = picked[start : start + MAX_BATCH]
            given = {**settings, "tick_limit": int(limit)}
            made = _record_batch(k, p, teams, rows.iloc[part], layouts, int(seed), given)
            out |= dict(zip(part, made, strict=True))
    return [out[i] for i in range(len(rows))]


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


_RECORDERS: dict[Any, Callable] = {}


def _recorder(env: Any, p: EvalParts, teams: tuple[System, ...], ticks: int) -> Callable:
    """The jitted `run(starts, seeds, games, root) -> (final state, per-tick arrays)`, one per
    (mode settings, batch size, Systems, ticks): another layout or seed reuses it."""
    key = (env.mode, env.num_envs, env.reward_fn, teams, ticks, id(p))
    if key not in _RECORDERS:
        _RECORDERS[key] = _build(env, p, teams, ticks)
    return _RECORDERS[key]


def _build(env: Any, p: EvalParts, teams: tuple[System, ...], ticks: int) -> Callable:
    bound = tuple(t.bind(t.params) for t in teams)

    def run(starts: Any, seeds: jax.Array, games: jax.Array, root: jax.Array) -> Any:
        memories = tuple(
            jax.vmap(s.init)(memory_keys(root, seeds, games, t)) for t, s in enumerate(bound)
        )

        def tick(carry: tuple[Any, Any], _: None) -> tuple[Any, dict[str, jax.Array]]:
            t = play_tick(env, bound, root, seeds, *carry, parts=p)
            masks = env.action_masks(t.before)
            assert t.reward is not None  # play_tick always gives the official reward
            made = episode_replays.tick_arrays(t.before, t.actions, masks, t.facts, t.reward)
            return (t.state, t.memories), made

        return jax.lax.scan(tick, (starts, memories), None, length=ticks)

    return jax.jit(run)


def _record_batch(
    k: ModeKit, p: EvalParts, teams: tuple[System, ...], rows: pd.DataFrame,
    layouts: dict[str, Layout], seed: int, settings: dict[str, Any],
) -> list[Replay]:  # fmt: skip
    """Record `rows` (one seed, tick limit and shape group) in one compiled batch."""
    assert k.layouts is not None
    n = len(rows)
    size = 1 << (n - 1).bit_length()  # a power of two: few programs
    pad = np.minimum(np.arange(size), n - 1)
    used = list(dict.fromkeys(rows["map_name"].astype(str)))
    try:
        env = p.build(k, [layouts[u] for u in used], size, None, None, settings)
    except ConfigError as err:
        raise EvalError(str(err)) from None
    if len(p.rosters(env)) != 1:
        raise EvalError(f"games: {k.id} has roster choices (its parts must record them)")
    column = lambda c: jnp.asarray(rows[c].to_numpy()[pad], jnp.int32)  # noqa: E731
    seeds, root = column("seed_number"), root_key(seed)
    starts = p.start_games(
        env, jnp.asarray([used.index(m) for m in rows["map_name"].astype(str)])[pad],
        jnp.zeros(size, jnp.int32), jnp.asarray(rows["a_spawn"].to_numpy() == "right")[pad],
        start_keys(root, seeds),
    )  # fmt: skip
    run = _recorder(env, p, teams, int(settings["tick_limit"]))
    (final, _), per_tick = run(starts, seeds, column("game"), root)
    per_tick, final = jax.tree.map(np.asarray, (per_tick, named_leaves("state", final)))
    system = " vs ".join(t.name for t in teams)
    replays = []
    for i, row in enumerate(rows.to_dict("records")):
        ticks = int(final["state.tick"][i])
        arrays = episode_replays.game_arrays(per_tick, final, i, ticks)
        outcome = int(final["state.outcome"][i])
        key = episode_replays.game_start_key(seed, int(row["seed_number"]))
        header = {
            "format": FORMAT, "engine": marl_bgs.__version__, "mode": k.id,
            "settings": {k.layouts.keyword: str(row["map_name"]), **settings},
            "key": episode_replays.key_words(key),
            "game": int(row["game"]), "ticks": ticks, "outcome": outcome, "system": system,
            "row": {"seed": seed, "seed_number": int(row["seed_number"]), "roster": 0,
                    "a_spawn": str(row["a_spawn"])},
        }  # fmt: skip
        result = k.results[outcome] if 0 < outcome < len(k.results) else "unfinished"
        if (result, ticks) != (row["result"], int(row["ticks"])):
            raise EvalError(
                f"games: game {row['game']} ended {result} after {ticks} ticks when recorded, "
                f"but its row says {row['result']} after {row['ticks']}: record with the Systems "
                "and settings the evaluation used"
            )
        replays.append(Replay(header=header, arrays=arrays))
    return replays
