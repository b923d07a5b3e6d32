"""Start-state pools: what `reset` and `reset_done` draw from, as data (never a new step program).

A pool holds P prepared entries, each in two sides (side 0 as built, side 1 with the teams' ends
swapped), and a weight per entry. Entries can be anything a mode's state can hold: maps x rosters x
spawn ends, authored snapshots, curriculum stages with other team sizes, winning scores or
obstacles switched off. Pools with the same leaf shapes (same P) share compiled programs; pools of
another P compile once more.

Game `g`'s episode `e` draws its entry from `fold_in(fold_in(key, g), e)` only, so a game's starts
never depend on the batch size. A mode whose starts are random beyond the entry (Two-Bridge's
spawn points) finishes the drawn state with its `start(key, state)`, from a key of its own
(`fold_in(that key, START_TAG)`), so the entry and side draws are the same for every mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.checks import shown
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.pytree import PyTree, pytree_dataclass

START_TAG = 1  # folded into a game's draw key for the mode's own start randomness
StartFn = Callable[[jax.Array, Any], Any]  # a mode's `start(key, state) -> state`
# Which side (spawn ends) each game plays, the `spawn_swap` setting of every mode: see `side_of`.
SPAWN_SWAPS: tuple[str, ...] = ("half", "none", "all", "random")


def check_spawn_swap(value: Any, error: type[ConfigError] = ConfigError) -> str:
    """A `spawn_swap` setting as a plain str (one of `SPAWN_SWAPS`), else `error` naming it."""
    if not isinstance(value, str) or value not in SPAWN_SWAPS:
        raise error(f"spawn_swap: expected one of {list(SPAWN_SWAPS)}, got {shown(value)}")
    return str(value)  # a numpy str_ becomes a plain str


@pytree_dataclass
class StartPool(PyTree):
    """P start entries in two sides [P, 2, ...] and their draw weights float32 [P]."""

    states: Any  # a mode's state with leading axes [P, 2]
    weights: jax.Array  # float32 [P], non-negative, not all zero

    @property
    def size(self) -> int:
        return int(self.weights.shape[0])


def check_weights(weights: Any, count: int, field: str = "weights") -> np.ndarray:
    """Validated non-negative weights [count] with a positive sum (None: uniform)."""
    if weights is None:
        return np.ones(count, np.float32)
    numbers = isinstance(weights, list | tuple | np.ndarray) and all(
        isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool | np.bool_)
        for x in np.asarray(weights, dtype=object).ravel()
    )
    try:
        w = np.asarray(weights, dtype=np.float64) if numbers else np.full(count, np.nan)
    except (TypeError, ValueError, OverflowError):
        w = np.full(count, np.nan)  # not numbers, or too large for a float: reported below
    if w.shape != (count,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ConfigError(
            f"{field}: expected {count} finite non-negative weights with a positive sum, got "
            f"{shown(weights)}"
        )
    return w.astype(np.float32)


def _entry_shapes(tree: Any, lead: int) -> Any:
    """Tree structure and each leaf's (shape after the first `lead` axes, dtype)."""
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, [(tuple(np.shape(x)[lead:]), jnp.result_type(x)) for x in leaves]


def check_like(pool: StartPool, like: StartPool, field: str = "pool") -> None:
    """Raise ConfigError unless `pool`'s entries have the structure, shapes and dtypes of
    `like`'s (any number of entries): a pool for another mode or settings is refused."""
    if _entry_shapes(pool.states, 2) != _entry_shapes(like.states, 2):
        raise ConfigError(
            f"{field}: its start states do not match this env's (another mode, message width or"
            " state layout); build the pool from states of this env's mode and settings"
        )


def make_pool(states: Any, swapped: Any = None, weights: Any = None) -> StartPool:
    """A pool from stacked start states [P, ...] and their spawn-swapped twins (default: the same
    states, when the two sides are not distinct)."""
    swapped = states if swapped is None else swapped
    leaves = jax.tree.leaves(states)
    if not leaves or any(np.ndim(x) == 0 for x in leaves):
        raise ConfigError("states: expected start states stacked on a leading entry axis")
    if len({np.shape(x)[0] for x in leaves}) != 1:
        raise ConfigError("states: every leaf needs the same number of entries (leading axis)")
    if _entry_shapes(swapped, 0) != _entry_shapes(states, 0):
        raise ConfigError("swapped: expected the same structure, shapes and dtypes as states")
    both = jax.tree.map(lambda a, b: jnp.stack([a, b], axis=1), states, swapped)
    count = int(jax.tree.leaves(states)[0].shape[0])
    return StartPool(states=both, weights=jnp.asarray(check_weights(weights, count)))


def concat_pools(pools: Sequence[StartPool], weights: Any = None) -> StartPool:
    """One pool from several (e.g. curriculum stages); each pool's total weight is scaled to its
    share of `weights` (default: equal shares)."""
    if not pools:
        raise ConfigError("pools: expected at least one StartPool")
    share = check_weights(weights, len(pools), "weights")
    for i, p in enumerate(pools[1:], start=1):
        check_like(p, pools[0], f"pools[{i}]")
    parts = [p.weights / jnp.sum(p.weights) * s for p, s in zip(pools, share, strict=True)]
    states = jax.tree.map(lambda *xs: jnp.concatenate(xs), *[p.states for p in pools])
    return StartPool(states=states, weights=jnp.concatenate(parts))


def side_of(rule: str, key: jax.Array, game: jax.Array, episode: jax.Array) -> jax.Array:
    """Which side a game plays: "half" alternates per game and episode (mirrored pairs), "none"
    and "all" fix it, "random" draws it."""
    if rule == "half":
        return (game + episode) % 2 == 1
    if rule == "none":
        return jnp.bool_(False)
    if rule == "all":
        return jnp.bool_(True)
    return jax.random.bernoulli(key)


def take(pool: StartPool, entry: jax.Array, side: jax.Array, episode: jax.Array) -> Any:
    """The start state of `entry` on `side`, counted as episode `episode`."""
    state = jax.tree.map(lambda a: a[entry, jnp.asarray(side, jnp.int32)], pool.states)
    return state.replace(episode=jnp.asarray(episode, jnp.int32))


def draw(
    key: jax.Array,
    pool: StartPool,
    game: jax.Array,
    episode: jax.Array,
    spawn_swap: str,
    start: StartFn | None = None,
) -> Any:
    """Game `game`'s start for episode `episode`: an entry by weight, a side by `spawn_swap`,
    then (if given) the mode's `start` from the game's own key."""
    k = jax.random.fold_in(jax.random.fold_in(key, game), episode)
    k_entry, k_side = jax.random.split(k)
    entry = jax.random.categorical(k_entry, jnp.log(pool.weights))
    state = take(pool, entry, side_of(spawn_swap, k_side, game, episode), episode)
    return state if start is None else start(jax.random.fold_in(k, START_TAG), state)
