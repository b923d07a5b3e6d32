"""What evaluation needs from a mode, by mode id: `EvalParts`, found through `PARTS`.

A mode's evaluation parts are registered with `register(mode, parts)` or through the entry-point
group `marl_bgs_eval.modes` (name: the mode's alias, value: "module:PARTS"). `EvalParts`' defaults
fit a mode with named layouts, no rosters, no classes, no named Systems, no metric families and
results read from the outcome alone; Team Deathmatch (`marl_bgs_eval.tdm`) and Two-Bridge
(`marl_bgs_eval.two_bridge`) override what they add. Generic code (`evaluate`, the play loop,
results tables, Systems' classes, System names) asks `parts(mode)`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import marl_bgs
from marl_bgs import BatchedEnv, ConfigError, ModeKit, PartRegistry, TeamInputs
from marl_bgs.core import pool as pools
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.measures import GENERIC, Measure

if TYPE_CHECKING:
    from marl_bgs_eval.replay_files import ReplaySchema

INT, STR, FLOAT = "int64", "string", "float64"
LEVELS = ("none", "priority", "full")  # the metric levels an evaluation records
SCHEMA = ["column", "level", "section", "topic", "unit", "who", "meaning"]  # a metric schema


def search_schema(schema: pd.DataFrame, text: str) -> pd.DataFrame:
    """Rows of a metric schema whose column, topic or meaning contains `text` (any case)."""
    if not isinstance(text, str) or not text.strip():
        raise EvalError(f"find: expected some text to search for, got {text!r}")
    hay = schema["column"] + " " + schema["topic"] + " " + schema["meaning"]
    return schema.loc[hay.str.contains(text.strip(), case=False, regex=False)].reset_index(
        drop=True
    )


class Layout(NamedTuple):
    """One layout an evaluation plays (a map, a variant): its record id (the mode's index, or
    a custom layout's id), name, content hash (16 hex digits) and the object its builder takes."""

    id: int
    name: str
    hash: str
    ref: Any


def name_hash(mode_id: str, name: str) -> str:
    """A layout's hash where its name fixes its content (16 hex digits)."""
    return hashlib.sha256(f"{mode_id}:{name}".encode()).hexdigest()[:16]


FailRows = Callable[[Any, str], None]  # (bad rows bool [n], what) -> raises naming the first


@dataclass(frozen=True, eq=False)
class EvalParts:
    """A mode's evaluation parts; the defaults fit a simple mode (see the module docstring)."""

    columns: Mapping[str, str] = field(default_factory=dict)  # the mode's own result columns
    opponent: str = ""  # the results' system_b of a single-team mode (the mode's own enemies)
    same_in_pair: tuple[str, ...] = ()  # own columns both games of a spawn-swapped pair share
    same_game: tuple[str, ...] = ()  # own columns that, with the fingerprint, fix one game
    outcome_columns: tuple[str, ...] = ()  # own columns one game played again must repeat
    signed: tuple[str, ...] = ()  # own numeric columns that may be negative (others are >= 0)
    summary: tuple[str, ...] = ()  # own numeric columns the command line's summary averages
    replay: ReplaySchema | None = None  # its replay files' header, tick schema and checks
    class_names: tuple[str, ...] = ()  # names of its class ids 1, 2, ...; initials distinct
    systems: Mapping[str, Callable[[], Any]] = field(default_factory=dict)  # named Systems

    def __post_init__(self) -> None:
        letters = self.class_letters()
        if len(letters) != len(self.class_names) or len(set(letters)) != len(letters):
            raise EvalError(
                f"class_names: expected names with distinct initials (the classes' letters), "
                f"got {list(self.class_names)}"
            )

    def class_letters(self) -> str:
        """Its classes' letters (each name's initial, upper case) in class-id order: what
        `system(..., classes="MWH")` reads."""
        return "".join(name[:1].upper() for name in self.class_names)

    # --- what is played ----------------------------------------------------------------------
    def layouts(self, kit: ModeKit, maps: Any, split: str | None) -> list[Layout]:
        """The layouts `maps` names (a `Layouts.select` text, an index or a list of them)."""
        if kit.layouts is None:
            raise EvalError(f"maps: mode {kit.id!r} has no layouts to choose")
        names = kit.layouts.names
        refs = [maps] if isinstance(maps, str | int | np.integer) else list(maps)
        picked: list[int] = []
        try:
            for ref in refs:
                if isinstance(ref, int | np.integer) and not isinstance(ref, bool):
                    picked += kit.layouts.select(str(int(ref)))
                elif isinstance(ref, str):
                    picked += kit.layouts.select(ref)
                else:
                    raise EvalError(f"maps: expected layout names or indices, got {ref!r}")
            if split is not None:
                inside = set(kit.layouts.select(split))
                outside = [names[i] for i in picked if i not in inside]
                if outside:
                    raise EvalError(f"maps: {outside} are not in split {split!r}")
        except ConfigError as err:
            raise EvalError(f"maps: {err}") from None
        if len(set(picked)) != len(picked):
            raise EvalError("maps: a layout is listed more than once")
        return [Layout(i, names[i], name_hash(kit.id, names[i]), names[i]) for i in picked]

    def build(
        self, kit: ModeKit, layouts: Sequence[Layout], num_envs: int, rosters: Any, mesh: Any,
        settings: dict[str, Any],
    ) -> BatchedEnv:  # fmt: skip
        """The env playing these layouts (one shape group) with `num_envs` games."""
        if rosters is not None:
            raise EvalError(f"rosters: mode {kit.id!r} has no rosters")
        assert kit.layouts is not None
        refs = [layout.ref for layout in layouts]
        return kit.build(**{kit.layouts.keyword: refs}, num_envs=num_envs, mesh=mesh, **settings)

    def rosters(self, env: BatchedEnv) -> list[tuple[str, ...]]:
        """Each roster choice of `env`, as one text per controlled team (default: one, none)."""
        del env
        return [()]

    def start_games(
        self, env: BatchedEnv, layout: Any, roster: Any, swap: Any, keys: jax.Array
    ) -> Any:
        """Start states [num_envs] of (layout index in the env's list, roster index, swap),
        the mode's own start draws made from `keys` [num_envs] (one per game)."""
        del roster
        return _start(env.mode, env.pool, jnp.asarray(layout), jnp.asarray(swap), keys)

    def meta(self, env: BatchedEnv) -> dict[str, int]:
        """The rule values every row of this evaluation records (at least `tick_limit`)."""
        return {"tick_limit": int(np.max(np.asarray(env.pool.states.tick_limit)))}

    def problem(self, env: BatchedEnv, roster: int, team: int, system: Any) -> str | None:
        """Why `system` cannot play `team` with roster choice `roster` (default: it can)."""
        del env, roster, team, system
        return None

    def identity(
        self, roster: Any, rosters: Sequence[tuple[str, ...]], meta: dict[str, int]
    ) -> dict[str, Any]:
        """The mode's own columns that identify scheduled games (roster indices `roster`)
        before they are played (a resumed run's games are checked against them)."""
        del roster, rosters, meta
        return {}

    def record_games(
        self, kit: ModeKit, team_a: Any, team_b: Any, rows: pd.DataFrame,
        settings: dict[str, Any],
    ) -> list[Any]:  # fmt: skip
        """Replays of results `rows` of this mode played by these Systems (`team_b` None when
        the mode plays team B), one per row (`marl_bgs_eval.game_replays.record_games`);
        default: episode replays with the row (the default `replay` schema's files)."""
        from marl_bgs_eval.game_replays import record_rows

        return record_rows(kit, self, team_a, team_b, rows, settings)

    # --- what the play loop keeps -------------------------------------------------------------
    def occupied(self, inputs: TeamInputs) -> jax.Array:
        """bool [n, team_size]: the slots an agent plays (the others are named '-')."""
        return jnp.ones(inputs.obs.shape[:2], bool)

    def final(self, state: Any) -> Any:
        """What the results keep of a game's last state, per game (a pytree [n, ...])."""
        del state
        return ()

    def metric_columns(self, level: str) -> list[str]:
        """The metric columns of `level` (counts, or amounts where `is_amount`), in order; those
        that are also in `columns` are the mode's own, the rest the level's extra columns."""
        del level
        return []

    def metric_schema(self) -> pd.DataFrame:
        """Every metric column (`SCHEMA`: column, the lowest level that records it, section,
        topic, unit, who did what to whom, meaning); default: each level's columns, nothing
        more known about them."""
        rows, seen = [], set()
        for level in LEVELS:
            for column in self.metric_columns(level):
                if column not in seen:
                    seen.add(column)
                    rows.append((column, level, "", "", "", False, ""))
        return pd.DataFrame(rows, columns=SCHEMA)

    def metric_page(self) -> str | None:
        """The metrics page (markdown) of this mode, or None (default: none)."""
        return None

    def is_amount(self, column: str) -> bool:
        """Whether a metric column holds an amount (float) rather than a count (int)."""
        del column
        return False

    def fresh_memory(self, n: int) -> Any:
        """The metrics' memory of `n` games about to start."""
        del n
        return ()

    def tally(self, level: str, tick: Any, memory: Any) -> tuple[jax.Array, Any]:
        """One tick's counters [n, len(metric_columns(level))] and the memory after."""
        return jnp.zeros((tick.actions.shape[0], 0), jnp.float32), memory

    def fingerprint(self, trace: jax.Array, tick: Any) -> jax.Array:
        """Fold one tick into each game's fingerprint (`marl_bgs_eval.fingerprint`)."""
        from marl_bgs_eval import fingerprint as fp

        return fp.fold_words(trace, [tick.actions, tick.state.outcome])

    # --- results rows -------------------------------------------------------------------------
    def row_columns(
        self, sched: pd.DataFrame, final: Any, counters: pd.DataFrame,
        rosters: Sequence[tuple[str, ...]], meta: dict[str, int],
    ) -> dict[str, Any]:  # fmt: skip
        """The mode's own columns of finished games: `sched` rows, `final` per game, the
        metric `counters` (typed, one column per `metric_columns(level)`), `rosters` texts."""
        del sched, final, counters, rosters, meta
        return {}

    def check_rows(self, df: pd.DataFrame, fail: FailRows) -> None:
        """The mode's own checks of a results table's rows (call `fail(bad, what)`)."""
        del df, fail

    def measures(self) -> dict[str, Measure]:
        """The analysis measures `system_metrics` reports for this mode, by name."""
        return dict(GENERIC)

    def team_measures(self) -> dict[str, Measure]:
        """Further team-level measures `system_metrics` computes when asked for them by name
        (the teamwork screen's full list); none unless the mode has them."""
        return {}


@partial(jax.jit, static_argnums=0)
def _start(mode: Any, pool: Any, entry: jax.Array, side: jax.Array, keys: jax.Array) -> Any:
    take = lambda k, e, s: mode.start(k, pools.take(pool, e, s, jnp.int32(0)))  # noqa: E731
    return jax.vmap(take)(keys, entry, side)


PARTS = PartRegistry("marl_bgs_eval.modes", "evaluation parts", EvalParts, EvalError)
register = PARTS.register  # give a mode (an id or alias) its evaluation parts
parts = PARTS.get  # the evaluation parts of a mode id or alias


def kit(mode: str) -> ModeKit:
    """The engine kit of a mode id or alias (an EvalError if unknown)."""
    try:
        return marl_bgs.kit(mode)
    except ConfigError as err:
        raise EvalError(str(err)) from None
