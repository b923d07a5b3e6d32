"""Mode kits: what every package above the engine learns about a mode, found by mode id.

A mode registers an engine kit (`ModeKit`: its builder, aliases, layouts and outcome names)
through the entry-point group `marl_bgs.modes` (name: the mode's alias, value: "module:KIT") or
with `register_kit(kit)`. Each package above the engine keeps the parts it needs in a
`PartRegistry` of its own (eval's result columns and metrics, the clients' renderer, the LLM
text view, training presets), filled the same way through that package's entry-point group.
Generic code asks these registries and never imports a mode by name.

    kit = marl_bgs.kit("two-bridge")      # by id or alias
    kit.layouts.select("V2_Base,V2_Combat")  # [3, 5]: what `--maps` picks
    env = kit.build(num_envs=8, **{kit.layouts.keyword: "V2_Base"})
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from marl_bgs.core.checks import did_you_mean, shown
from marl_bgs.core.errors import ConfigError

T = TypeVar("T")
RESULTS = ("win", "loss", "draw")  # team A's result of a finished game, in every mode


@dataclass(frozen=True)
class Layouts:
    """The layouts a mode is played on (Team Deathmatch's maps, Two-Bridge's variants).

    `keyword` is the builder's keyword that picks them (it takes an index or a name, or a list);
    `catalog()` lists their names, layout i being the i-th (called once, when first needed);
    `splits` names subsets of indices (e.g. train / validation / test); `group(name)` says which
    layouts share array shapes and so may share one env (None: all of them do)."""

    keyword: str
    catalog: Callable[[], Sequence[str]]
    splits: Mapping[str, Sequence[int]] = field(default_factory=dict)
    group: Callable[[str], Any] | None = None

    @cached_property
    def names(self) -> tuple[str, ...]:
        """Every layout's name, by index."""
        return tuple(self.catalog())

    def select(self, text: str) -> list[int]:
        """Indices picked by `text`: comma-separated indices (`47,48`), ranges (`0-39`), split
        names (`train`, `validation`, `test`), `all`, or layout names; in order, no repeats."""
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(
                f"{self.keyword}: expected e.g. '0,3', '0-9', 'all' or a name, got {text!r}"
            )
        n, picked = len(self.names), []
        for item in (part.strip() for part in text.split(",")):
            span = re.fullmatch(r"(\d+)-(\d+)", item)
            if item == "all":
                picked += range(n)
            elif item in self.splits:
                picked += self.splits[item]
            elif item.isdecimal() or span:  # not isdigit: int() refuses "²"
                ends = span.groups() if span else (item, item)
                lo, hi = int(ends[0]), int(ends[1])
                if not 0 <= lo <= hi < n:
                    raise ConfigError(f"{self.keyword}: {item!r} is outside 0-{n - 1}")
                picked += range(lo, hi + 1)
            elif item in self.names:
                picked.append(self.names.index(item))
            else:
                names = list(self.names) if n <= 12 else [f"one of the {n} layout names"]
                allowed = ["all", *self.splits, f"0-{n - 1}", *names]
                hint = did_you_mean(item, list(self.names) + list(self.splits))
                raise ConfigError(f"{self.keyword}: unknown {item!r}{hint}; allowed {allowed}")
        return list(dict.fromkeys(picked))

    def shape_groups(self, indices: Sequence[int]) -> list[list[int]]:
        """`indices` cut into sets of layouts that share shapes, in first-seen order."""
        if self.group is None:
            return [list(indices)]
        groups: dict[Any, list[int]] = {}
        for i in indices:
            groups.setdefault(self.group(self.names[i]), []).append(i)
        return list(groups.values())


@dataclass(frozen=True)
class ModeKit:
    """A mode as the engine registers it.

    `build(**settings)` returns its batched env; `outcomes[c]` names outcome code c (0: the
    game runs) and `results[c]` is team A's result of it ("win", "loss" or "draw"); a mode
    whose second team is played by the mode itself (Two-Bridge's enemies) has
    `controlled_teams` 1."""

    id: str
    build: Callable[..., Any]
    alias: str | None = None
    layouts: Layouts | None = None
    outcomes: tuple[str, ...] = ("running", "team A wins", "team B wins", "draw")
    results: tuple[str, ...] = ("", "win", "loss", "draw")
    controlled_teams: int = 2
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ConfigError(f"id: expected a versioned mode id like 'duel-v1', got {self.id!r}")
        if not callable(self.build):
            raise ConfigError(f"build: expected a callable (**settings) -> env, got {self.build!r}")
        if len(self.results) != len(self.outcomes) or any(
            r not in RESULTS for r in self.results[1:]
        ):
            raise ConfigError(
                f"results: expected one of {list(RESULTS)} for each outcome after 'running' "
                f"({len(self.outcomes) - 1}), got {list(self.results[1:])}"
            )
        if self.controlled_teams not in (1, 2):
            raise ConfigError(f"controlled_teams: expected 1 or 2, got {self.controlled_teams!r}")


class PartRegistry(Generic[T]):
    """A package's per-mode parts, by versioned mode id: filled with `register(mode, part)` or
    through the entry-point group `group` (entry name: a mode id or alias; value:
    "module:object"), which is read on the first look-up. `kind` is the parts' type (checked on
    registration); every refusal is raised as `error` (the package's own error type)."""

    def __init__(
        self, group: str, what: str, kind: type[T] | None = None,
        error: type[Exception] = ConfigError,
    ) -> None:  # fmt: skip
        self.group, self.what, self.kind, self.error = group, what, kind, error
        self._parts: dict[str, T] = {}
        self._loaded = False

    def _resolve(self, mode: str) -> str:
        try:
            return resolve(mode)
        except ConfigError as err:
            raise self.error(str(err)) from None

    def register(self, mode: str, part: T) -> None:
        """Register `part` for `mode` (an id or alias of a registered mode)."""
        if self.kind is not None and not isinstance(part, self.kind):
            name = f"{self.kind.__module__.split('.')[0]}.{self.kind.__name__}"
            raise self.error(f"parts: expected a {name}, got {type(part).__name__}")
        mode_id = self._resolve(mode)
        if mode_id in self._parts and self._parts[mode_id] is not part:
            raise self.error(f"mode: {mode_id!r} already has {self.what}")
        self._parts[mode_id] = part

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for ep in entry_points(group=self.group):
                mode_id = self._resolve(ep.name)
                if mode_id not in self._parts:
                    self._parts[mode_id] = ep.load()

    def get(self, mode: str) -> T:
        """The part of `mode` (an id or alias); a clear error names the modes that have one."""
        mode_id = self._resolve(mode)
        self._load()
        if mode_id not in self._parts:
            raise self.error(
                f"mode: {mode_id!r} has no {self.what} (registered with {self.group!r}); "
                f"modes with one: {sorted(self._parts)}"
            )
        return self._parts[mode_id]

    def modes(self) -> list[str]:
        """Versioned ids of the modes that have a part here."""
        self._load()
        return sorted(self._parts)


KITS: dict[str, ModeKit] = {}  # versioned id -> kit
MODES: dict[str, Callable[..., Any]] = {}  # versioned id -> builder (the kits' `build`)
ALIASES: dict[str, str] = {}  # alias -> versioned id
GROUP = "marl_bgs.modes"
_loaded = False


def register_kit(kit: ModeKit) -> ModeKit:
    """Register a mode's engine kit; `marl_bgs.make(kit.id)` (or its alias) then builds it."""
    if not isinstance(kit, ModeKit):
        raise ConfigError(f"kit: expected a marl_bgs.ModeKit, got {type(kit).__name__}")
    old = KITS.get(kit.id)
    if old is not None and old is not kit and old.build is not kit.build:
        raise ConfigError(f"mode: {kit.id!r} is already registered")
    if kit.alias is not None and ALIASES.get(kit.alias, kit.id) != kit.id:
        raise ConfigError(f"alias: {kit.alias!r} already names {ALIASES[kit.alias]!r}")
    KITS[kit.id], MODES[kit.id] = kit, kit.build
    if kit.alias is not None:
        ALIASES[kit.alias] = kit.id
    return kit


def load_entry_points() -> None:
    """Register the kits of the entry-point group `marl_bgs.modes` (once)."""
    global _loaded
    if not _loaded:
        _loaded = True
        for ep in entry_points(group=GROUP):
            kit = ep.load()
            if not isinstance(kit, ModeKit) or ep.name not in (kit.id, kit.alias):
                raise ConfigError(
                    f"entry point {ep.name!r} ({ep.value}): expected a ModeKit whose id or "
                    f"alias is {ep.name!r}"
                )
            register_kit(kit)


def resolve(mode: str) -> str:
    """The versioned id of a mode id or alias."""
    load_entry_points()
    allowed = sorted(KITS) + sorted(ALIASES)
    resolved = ALIASES.get(mode, mode) if isinstance(mode, str) else None
    if resolved not in KITS:
        hint = did_you_mean(mode, allowed)
        raise ConfigError(f"mode: unknown mode {shown(mode)}{hint}; allowed {allowed}")
    return str(resolved)


def kit(mode: str) -> ModeKit:
    """The engine kit of a mode id or alias."""
    return KITS[resolve(mode)]
