"""Episode replays of any mode whose `EvalParts.replay` is `episode_schema()` (Two-Bridge, and a
mode of your own): record the games its teams' policies played, save each as one replay file
(`marl_bgs_eval.replay_files`), load it back only after the engine has reproduced it, and
rebuild its states for pictures or analysis. Nothing here knows a rule or a team count.

    replays = record(policy, jax.random.key(0), mode="two-bridge", settings={"variant": "V2_Base"},
                     games=[0, 3])
    save(replays[0], "game-0.episode.zip")
    replay = load("game-0.episode.zip")      # checked, then verified step by step
    states, facts = history(replay)          # the mode's state pytree [T + 1] and facts [T]

    duel = record([closer, random], key, mode="duel", system="closer vs random")  # 2 teams

`record` takes one policy per team of the mode, in team order (a bare policy for a single-team
mode). Game g of `record(policy, key, mode=..., games=[g])` of a single-team mode is game g of
`play_episodes(env, policy, key)`: same start, same policy keys, same end. `mode` names the
mode (an id or alias); there is no default.

A file is a replay file (`marl_bgs_eval.replay_files.FORMAT`). Its header adds to the generic
fields (`format`, `engine`, `mode`, `ticks`): `settings` (the `make` keywords, JSON values),
`key` (the episode key's two uint32 words), `game` (the game index), `outcome` (the mode's
outcome code) and `system` (who played). Its arrays, for a game of T ticks:

    state.<field>  [T + 1, ...]  the state before each tick, then the final state
    actions        int32 [T, agents, heads]  the actions the policy chose
    masks.<field>  bool [T, ...]             the legal actions it was given
    facts.<field>  [T, ...]                  what each tick did
    reward         float32 [T, agents]       the mode's official reward

A game of an evaluation (`marl_bgs_eval.game_replays.record_games`) adds `row`: the results
row's `seed`, `seed_number`, `roster` (index) and `a_spawn`; its `settings` name its one layout,
`game` is its game number and `key` the key its start was drawn from (evaluation's start key of
that seed and seed number), and the start is the mode's evaluation start
(`EvalParts.start_games`) instead of `reset`.

Files of `marl-bgs-episode-replay-v1` (the same header and arrays) still load. `load` trusts
nothing: the container's checks, the header's fields and settings (the engine's own `make`
validates the settings), then `verify`: the engine redraws the start from the key and
replays the actions, and every state, mask, fact and reward must come out exactly as recorded.
So every value a reader meets is one the engine made. A custom `reward_fn` cannot be recorded
(the file would not say how to recompute it).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import marl_bgs
from marl_bgs import ConfigError, team_step
from marl_bgs.core.checks import shown
from marl_bgs.core.env import BatchedEnv, available_memory
from marl_bgs.core.registry import resolve
from marl_bgs.core.team import TeamPolicy
from marl_bgs_eval.array_zip import Layout, Replay, check_fields, header_int
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.modes import parts as mode_parts
from marl_bgs_eval.replay_files import (
    FORMAT,
    ReplaySchema,
    check_replay,
    load,
    named_leaves,
    save,
    schema,
    tick_parts,
)
from marl_bgs_eval.seeds import root_key, start_keys

__all__ = ["Replay", "episode_schema", "history", "load", "record", "save", "verify"]

FIELDS = ("settings", "key", "game", "outcome", "system")
ROW = ("seed", "seed_number", "roster", "a_spawn")  # the optional `row` of an evaluation's game
SPAWNS = ("left", "right")
NOT_SETTINGS = ("num_envs", "mesh", "mesh_axis", "reward_fn")  # what a replay file cannot hold
MAX_GAME = 65_535  # verify redraws the start with game + 1 games
MAX_SETTINGS = 32
UINT32_MAX = 2**32 - 1
INT_MAX = 2**31 - 1


# --- the mode's arrays ------------------------------------------------------------------------


def _frozen(settings: dict[str, Any]) -> str:
    return json.dumps(settings, sort_keys=True, allow_nan=False)


@functools.lru_cache(maxsize=16)  # bounded: settings may come from untrusted files
def _env(mode: str, settings: str, num_envs: int = 1) -> BatchedEnv:
    return marl_bgs.make(mode, num_envs=num_envs, **json.loads(settings))


@functools.lru_cache(maxsize=16)
def _one_tick(mode: str, settings: str) -> tuple[Layout, Any, Any, int]:
    """Each named array of one tick (shape, dtype), the state's and facts' pytree structures,
    and the longest game the settings allow."""
    env = _env(mode, settings)
    state = jax.eval_shape(lambda k: env.reset(k)[1], jax.random.key(0))
    state = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape[1:], a.dtype), state)
    parts, facts = tick_parts(env, state)
    parts["reward"] = jax.ShapeDtypeStruct((env.num_agents,), jnp.float32)
    one = {k: (tuple(v.shape), np.dtype(v.dtype)) for k, v in parts.items()}
    limit = int(np.max(np.asarray(env.pool.states.tick_limit)))
    return one, jax.tree.structure(state), facts, limit


def layout(mode: str, settings: dict[str, Any], ticks: int) -> Layout:
    """Every array of a `ticks`-tick episode of `mode` with `settings`: name -> (shape, dtype)."""
    one = _one_tick(mode, _frozen(settings))[0]
    lead = lambda name: ticks + 1 if name.startswith("state.") else ticks  # noqa: E731
    return {name: ((lead(name), *shape), dtype) for name, (shape, dtype) in one.items()}


# --- recording --------------------------------------------------------------------------------


def _check_settings(settings: Any, where: str) -> dict[str, Any]:
    """Plain JSON `make` keywords a file can hold, or EvalError naming the field."""
    if not isinstance(settings, dict) or len(settings) > MAX_SETTINGS:
        raise EvalError(f"{where}: expected an object of at most {MAX_SETTINGS} make keywords")
    for k, v in settings.items():
        if not isinstance(k, str) or not 0 < len(k) <= 60:
            raise EvalError(f"{where}: keyword {shown(k)} is not a name of 1-60 characters")
        if k in NOT_SETTINGS:
            raise EvalError(
                f"{where}.{k}: a replay file cannot hold it (not allowed: {list(NOT_SETTINGS)})"
            )
        items = v if isinstance(v, list) and len(v) <= 64 else [v]
        plain = all(
            isinstance(x, str | bool | int) or (isinstance(x, float) and math.isfinite(x))
            for x in items
        )
        if not plain:
            raise EvalError(
                f"{where}.{k}: expected a text, number or boolean, or a list of at most 64 of"
                f" them, got {shown(v)}"
            )
    return settings


def _resolve(mode: str, settings: dict[str, Any], where: str) -> tuple[str, str]:
    """(versioned mode id, frozen settings) of a mode whose files are episode replays."""
    try:
        mode_id = resolve(mode)
        _env(mode_id, _frozen(settings))
    except ConfigError as err:
        raise EvalError(f"{where}: {err}") from None
    if schema(mode_id).check is not _replayed:
        raise EvalError(
            f"{where}: {mode_id} records its replays in a schema of its own, not as episode "
            "replays (Team Deathmatch: marl_bgs_eval.tdm.replays)"
        )
    return mode_id, _frozen(settings)


def _team_keys(key: jax.Array, team: int, n: int) -> jax.Array:
    """Team `team`'s `n` keys from one key (team 0 takes the key itself, as `run_episodes`)."""
    return jax.random.split(key if team == 0 else jax.random.fold_in(key, team), n)


def tick_arrays(
    state: Any, actions: jax.Array, masks: Any, facts: Any, reward: jax.Array
) -> dict[str, jax.Array]:
    """The named arrays an episode replay keeps of one tick (batched): the state it started
    from, the actions, the masks they were chosen under, the facts and the official reward."""
    return {
        **named_leaves("state", state), "actions": actions, **named_leaves("masks", masks),
        **named_leaves("facts", facts), "reward": reward,
    }  # fmt: skip


def game_arrays(
    per_tick: dict[str, np.ndarray], final: dict[str, np.ndarray], game: int, ticks: int
) -> dict[str, np.ndarray]:
    """One game's replay arrays from `tick_arrays` stacked over time [T, games, ...] and the
    final state's named arrays [games, ...]: its states [ticks + 1] (the last one final), the
    rest [ticks]."""
    return {
        name: np.array(
            np.concatenate([v[:, game], final[name][game][None]])[: ticks + 1]
            if name.startswith("state.") else v[:ticks, game], order="C",
        )
        for name, v in per_tick.items()
    }  # fmt: skip


def key_words(key: jax.Array) -> list[int]:
    """A key's data as plain integers (a header's `key`)."""
    return [int(w) for w in np.asarray(jax.random.key_data(key)).reshape(-1)]


def _trace(env: BatchedEnv, policies: Sequence[TeamPolicy], key: jax.Array, ticks: int) -> Any:
    """Every game of `env` for `ticks` ticks, keyed as `episodes.run_episodes` keys a single
    team: (final state, `tick_arrays` per tick)."""
    step = team_step(env, policies)
    n = env.num_envs
    k_reset, k_memory, k_play = jax.random.split(key, 3)
    _, state = env.reset(k_reset)
    memories = tuple(jax.vmap(p.init)(_team_keys(k_memory, i, n)) for i, p in enumerate(policies))

    def tick(carry: tuple, t: jax.Array) -> tuple:
        state, memories = carry
        now = jax.random.fold_in(k_play, t)
        out = step(state, memories, [_team_keys(now, i, n) for i in range(len(policies))])
        seen = tick_arrays(state, out.actions, env.action_masks(state), out.info["facts"],
                           out.reward)  # fmt: skip
        return (out.state, out.memories), seen

    (final, _), seen = jax.lax.scan(tick, (state, memories), jnp.arange(ticks, dtype=jnp.int32))
    return final, seen


def _policies(policy: TeamPolicy | Sequence[TeamPolicy], teams: int, mode: str) -> list[Any]:
    """One policy per team (a bare policy is a single team's), or EvalError."""
    given = list(policy) if isinstance(policy, list | tuple) else [policy]
    if len(given) != teams or not all(callable(getattr(p, "act", None)) for p in given):
        raise EvalError(
            f"policy: {mode} has {teams} team(s): give one policy (act and init) per team, in "
            f"team order; got {len(given)}"
        )
    return given


def record(
    policy: TeamPolicy | Sequence[TeamPolicy],
    key: jax.Array,
    *,
    mode: str,
    settings: dict[str, Any] | None = None,
    games: Sequence[int] = (0,),
    system: str = "policy",
) -> list[Replay]:
    """Play games `games` of `mode` with `settings` (`make` keywords) from `key`, team t played
    by `policy[t]` (a bare policy: the one team of a single-team mode), to their ends, and
    return one replay per game (in the order asked)."""
    given = {} if settings is None else dict(settings)
    given = {k: list(v) if isinstance(v, tuple) else v for k, v in given.items()}
    settings = _check_settings(given, "settings")
    mode_id, frozen = _resolve(mode, settings, "settings")
    whole = all(isinstance(g, int | np.integer) and not isinstance(g, bool) for g in games)
    picked = [int(g) for g in games] if whole else []
    if not picked or any(not 0 <= g <= MAX_GAME for g in picked) or len(set(picked)) < len(picked):
        raise EvalError(
            f"games: expected distinct game indices in [0, {MAX_GAME}], got {shown(games)}"
        )
    if not isinstance(system, str) or not 0 < len(system) <= 200:
        raise EvalError("system: expected a text of 1-200 characters")
    one, _, _, limit = _one_tick(mode_id, frozen)
    need = limit * (max(picked) + 1) * sum(int(np.prod(s)) * d.itemsize for s, d in one.values())
    if need > available_memory() // 4:
        raise EvalError(
            f"games: recording games 0-{max(picked)} for up to {limit} ticks needs about "
            f"{need / 2**30:.1f} GiB; pick lower game indices or a lower tick_limit"
        )
    env = _env(mode_id, frozen, max(picked) + 1)
    policies = _policies(policy, len(env.spec.teams), mode_id)
    final, seen = jax.jit(lambda k: _trace(env, policies, k, limit))(key)
    if bool(np.any(np.asarray(final.outcome)[picked] == 0)):
        raise EvalError(f"mode {mode_id}: a game had not ended after {limit} ticks")
    seen, last = jax.tree.map(np.asarray, (seen, named_leaves("state", final)))
    words = key_words(key)
    out = []
    for g in picked:
        ticks = int(np.asarray(final.tick)[g])
        arrays = game_arrays(seen, last, g, ticks)
        header = {
            "format": FORMAT, "engine": marl_bgs.__version__, "mode": mode_id,
            "settings": settings, "key": words, "game": g, "ticks": ticks,
            "outcome": int(np.asarray(final.outcome)[g]), "system": system,
        }  # fmt: skip
        out.append(Replay(header=header, arrays=arrays))
    return out


# --- checks -----------------------------------------------------------------------------------


def check_header(header: dict[str, Any], where: str) -> None:
    """Raise EvalError unless `header`'s episode fields (`FIELDS`) are ones this engine can
    replay (the generic fields already checked)."""
    if not isinstance(header["system"], str) or not 0 < len(header["system"]) <= 200:
        raise EvalError(f"{where}.system: expected a text of 1-200 characters")
    key = header["key"]
    if not isinstance(key, list) or len(key) != 2:
        raise EvalError(f"{where}.key: expected two integers in [0, {UINT32_MAX}]")
    for word in key:
        header_int(word, f"{where}.key", 0, UINT32_MAX)
    header_int(header["game"], f"{where}.game", 0, MAX_GAME if "row" not in header else INT_MAX)
    header_int(header["outcome"], f"{where}.outcome", 1, INT_MAX)
    settings = _check_settings(header["settings"], f"{where}.settings")
    mode_id, frozen = _resolve(header["mode"], settings, f"{where}.settings")
    limit = _one_tick(mode_id, frozen)[3]
    if header["ticks"] > limit:
        raise EvalError(f"{where}.ticks: {header['ticks']} exceeds the settings' limit {limit}")
    if "row" in header:
        _check_row(header, f"{where}.row")


def _check_row(header: dict[str, Any], where: str) -> None:
    """An evaluation game's `row`: its fields, and the start key they give is `key`."""
    row = header["row"]
    if not isinstance(row, dict):
        raise EvalError(f"{where}: expected an object with {list(ROW)}")
    check_fields(row, ROW, where)
    header_int(row["seed"], f"{where}.seed", 0, 2**63 - 1)
    for k in ("seed_number", "roster"):
        header_int(row[k], f"{where}.{k}", 0, INT_MAX)
    if row["a_spawn"] not in SPAWNS:
        raise EvalError(
            f"{where}.a_spawn: expected one of {list(SPAWNS)}, got {shown(row['a_spawn'])}"
        )
    if key_words(game_start_key(row["seed"], row["seed_number"])) != header["key"]:
        raise EvalError(f"{where}: seed and seed_number do not give the header's key")


def game_start_key(seed: int, seed_number: int) -> jax.Array:
    """The key an evaluation game of (`seed`, `seed_number`) draws its start from."""
    return start_keys(root_key(seed), jnp.asarray([seed_number], jnp.int32))[0]


def _layout_of(header: dict[str, Any]) -> Layout:
    return layout(header["mode"], header["settings"], header["ticks"])


def _start(replay: Replay) -> Any:
    """The recorded game's start as the engine draws it (a batch of one game)."""
    h = replay.header
    key = jax.random.wrap_key_data(jnp.asarray(h["key"], jnp.uint32))
    if "row" in h:  # an evaluation's game: the mode's evaluation start on its one layout
        row, env = h["row"], _env(h["mode"], _frozen(h["settings"]))
        one = lambda v: jnp.asarray([v], jnp.int32)  # noqa: E731
        swap = jnp.asarray([row["a_spawn"] == "right"])
        return mode_parts(h["mode"]).start_games(env, one(0), one(row["roster"]), swap, key[None])
    env = _env(h["mode"], _frozen(h["settings"]), h["game"] + 1)
    _, state = env.reset(jax.random.split(key, 3)[0])
    return jax.tree.map(lambda a: a[h["game"] : h["game"] + 1], state)


@functools.lru_cache(maxsize=16)
def _stepper(mode: str, settings: str, ticks: int) -> Any:
    """A compiled replay of `ticks` actions from one state, one program per settings."""
    env = _env(mode, settings)

    def tick(state: Any, action: jax.Array) -> tuple:
        masks = env.action_masks(state)
        _, nxt, reward, _, info = env.step(jax.random.key(0), state, action[None])
        made = {
            **named_leaves("state", nxt), **named_leaves("masks", masks),
            **named_leaves("facts", info["facts"]), "reward": env.stack(reward),
        }  # fmt: skip
        return nxt, jax.tree.map(lambda a: a[0], made)

    return jax.jit(lambda state, actions: jax.lax.scan(tick, state, actions)[1])


def verify(replay: Replay, source: str = "replay") -> None:
    """Redraw the start from the recorded key and replay the recorded actions through the
    engine's `step`; raise EvalError at the first state, mask, fact or reward it does not
    reproduce exactly, or when the header's ticks and outcome are not what the game did."""
    check_replay(replay, source)  # which ends in `_replayed`, the schema's check


def _replayed(replay: Replay, source: str) -> None:
    """`verify` of a replay whose header and arrays are already checked."""
    h, n, a = replay.header, replay.ticks, replay.arrays
    start = _start(replay)
    first = [
        (-1, name)
        for name, made in named_leaves("state", start).items()
        if not np.array_equal(np.asarray(made)[0], a[name][0])
    ]
    frozen = _frozen(h["settings"])
    limit = _one_tick(h["mode"], frozen)[3]
    actions = np.zeros((limit, *a["actions"].shape[1:]), np.int32)
    actions[:n] = a["actions"]
    out = _stepper(h["mode"], frozen, limit)(start, jnp.asarray(actions))
    for name, made in out.items():
        made = np.asarray(made)[:n]
        want = a[name][1:] if name.startswith("state.") else a[name]
        bad = [t for t in range(n) if not np.array_equal(made[t], want[t])]
        first += [(bad[0], name)] if bad else []
    if first:
        t, name = min(first)
        at = "the start" if t < 0 else f"tick {t}"
        raise EvalError(
            f"{source}: {at}: {name} differs from what the engine gives (the file was edited, or "
            f"engine {marl_bgs.__version__} plays otherwise than {h['engine']})"
        )
    end = {k: int(a[f"state.{k}"][-1]) for k in ("tick", "outcome")}
    running = [int(o) for o in a["state.outcome"][:-1]]
    if end != {"tick": n, "outcome": h["outcome"]} or any(running):
        raise EvalError(
            f"{source}: header says {n} ticks ending in outcome {h['outcome']}; the game ran "
            f"{end['tick']} ticks and ended in outcome {end['outcome']} (or ended earlier)"
        )


def episode_schema(legacy: str = "") -> ReplaySchema:
    """The replay schema of a single-team mode (its `EvalParts.replay`): the episode header
    fields, the arrays its settings give, and `verify` as the values' check. `legacy`: the
    format id of the mode's files before `replay_files.FORMAT` (same header and arrays)."""
    return ReplaySchema(
        fields=FIELDS, check_header=check_header, layout=_layout_of, check=_replayed,
        legacy=legacy, optional=("row",),
    )  # fmt: skip


def history(replay: Replay) -> tuple[Any, Any]:
    """The recorded game as the mode's own pytrees: states [T + 1] (the start first) and facts
    [T] (numpy leaves, no batch axis)."""
    check_replay(replay, values=False)
    one, states, facts, _ = _one_tick(replay.header["mode"], _frozen(replay.header["settings"]))
    pick = lambda prefix: [replay.arrays[k] for k in one if k.startswith(prefix)]  # noqa: E731
    return jax.tree.unflatten(states, pick("state.")), jax.tree.unflatten(facts, pick("facts."))
