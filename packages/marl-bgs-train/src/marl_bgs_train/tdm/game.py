"""Team Deathmatch's game settings for training: a config's `game` section (`TDMGame`) with the
paper's defaults (Tables S9-S10, Section S6), its reward, layout variation and curriculum
stages, and their checks (never a test map)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import marl_bgs
from marl_bgs import ConfigError
from marl_bgs.tdm.classes import LETTERS
from marl_bgs.tdm.config import DEFAULT_ROSTERS, RuleValues
from marl_bgs_train.config import to_dict, typed

RewardForm = Literal["agent", "team"]
TRAINING_MAPS: tuple[int, ...] = tuple(marl_bgs.maps.split("train"))
VALIDATION_PANEL_MAPS: tuple[int, ...] = (42, 43, 44, 46)
TEST_MAPS: tuple[int, ...] = tuple(marl_bgs.maps.split("test"))


@dataclass(frozen=True)
class RewardSettings:
    """The learner's reward (paper S6.1): the result plus Table S9's terms, and optional shaping.
    Shaping changes only the learner's signal, never its inputs or the official score."""

    form: RewardForm = "agent"  # per-agent terms, or the team's total to every agent
    combat: bool = True  # Table S9's combat-and-support terms
    score_shaping: float = 0.0  # x (own points - enemy points) each tick
    health_potential: float = 0.0  # potential-based shaping on the team health difference
    approach_potential: float = 0.0  # potential-based shaping on the distance to the enemy


@dataclass(frozen=True)
class LayoutVariation:
    """Layout randomisation of the training games (not in the paper): besides every start entry
    (map x roster pair), `variants` copies of it in which each obstacle is switched off with
    chance `dropout`, drawn as often as the original. Both spawn ends of an entry lose the same
    obstacles, so spawn-swapped games stay mirror images. The variants are fixed by `seed` when
    the run is built. Off while `dropout` is 0."""

    dropout: float = 0.0
    variants: int = 4
    seed: int = 0


Progress = Literal["", "win_rate", "margin", "reward_per_tick"]
PROGRESS: tuple[Progress, ...] = ("", "win_rate", "margin", "reward_per_tick")


@dataclass(frozen=True)
class Stage:
    """One curriculum stage: the games it starts (maps x roster pairs, its winning score) and
    when the next stage takes over: after `steps` game steps in this stage, or once an update's
    `progress` signal (its finished games' win rate or mean point margin, or its reward per
    tick) reaches `threshold`, whichever comes first (0 steps / no signal: never by that rule).
    The last stage never ends."""

    maps: tuple[int, ...] = tuple(range(12))
    rosters: tuple[tuple[str, str], ...] = (DEFAULT_ROSTERS,)
    winning_score: int = RuleValues.winning_score
    steps: int = 0
    progress: Progress = ""
    threshold: float = 0.0


def _rotated(k: int) -> tuple[tuple[str, str], ...]:
    """Five k-agent roster pairs in which every class plays on each side."""
    turn = lambda i: (LETTERS[i:] + LETTERS[:i])[:k]  # noqa: E731
    return tuple((turn(i), turn((i + 2) % 5)) for i in range(5))


BUILTIN_CURRICULUM: tuple[Stage, ...] = tuple(
    Stage(
        maps=tuple(range(12)),
        rosters=_rotated(k),
        winning_score=4 * k,
        steps=2_000_000 if k < 5 else 0,
    )
    for k in range(1, 6)
)  # the paper's built-in curriculum: maps 0-11, 1v1 -> 5v5, winning score 4 -> 20


@dataclass(frozen=True)
class TDMGame:
    """The games a Team Deathmatch learner trains on (a config's `game` section)."""

    # Settings added after configs were first saved, with the values that mean what a config
    # saved before them did: such a config loads with them.
    ADDED_SETTINGS: ClassVar[dict[str, Any]] = {
        "free_paths": 0,
        "layouts": to_dict(LayoutVariation()),
        "route_field": False,
    }

    maps: tuple[int, ...] = TRAINING_MAPS  # never a test map
    rosters: tuple[str, str] = DEFAULT_ROSTERS
    winning_score: int = RuleValues.winning_score
    tick_limit: int = RuleValues.tick_limit
    reward: RewardSettings = field(default_factory=RewardSettings)
    layouts: LayoutVariation = field(default_factory=LayoutVariation)
    curriculum: tuple[Stage, ...] = ()  # stages replace maps, rosters and winning_score
    free_paths: int = 0  # directions of the free-path feature added to the input (0: none)
    route_field: bool = False  # the walking-distance inputs to the enemy's side (`features`)


def check_training_maps(maps: Any) -> tuple[int | str, ...]:
    """The maps of a training run, checked: a test map (47-51), a scenario's arena, or a map file
    with the obstacles of either under another name, raises `ConfigError`; so does an unknown
    map."""
    specs = [marl_bgs.maps.load(ref) for ref in maps]
    held_out = {marl_bgs.maps.load(i).content_hash: f"test map {i}" for i in TEST_MAPS}
    if any(spec.split == "custom" for spec in specs):  # only a map file can be an arena
        for i in marl_bgs.scenarios.ids():  # (reading the scenarios builds their states: ~6 s)
            held_out[marl_bgs.scenarios.load(i).arena.content_hash] = f"the arena of scenario {i}"
    for ref, spec in zip(maps, specs, strict=True):
        if spec.split == "test" or spec.content_hash in held_out:
            what = held_out.get(spec.content_hash, f"test map {spec.id}")
            raise ConfigError(
                f"maps: {ref!r} is {what}, which training may never use; allowed: training maps "
                f"{TRAINING_MAPS[0]}-{TRAINING_MAPS[-1]}, validation maps and custom maps"
            )
    return tuple(maps)


def trained_maps(game: TDMGame) -> tuple[int, ...]:
    """The shipped maps (ids) a run's games start on: its maps and its curriculum's (map files
    are not shipped and have no id)."""
    refs = [*game.maps, *(ref for stage in game.curriculum for ref in stage.maps)]
    specs = [marl_bgs.maps.load(ref) for ref in refs]
    return tuple(sorted({int(spec.id) for spec in specs if spec.split != "custom"}))


def check(game: TDMGame) -> TDMGame:
    """Every game setting checked; a bad one raises `ConfigError` naming it (as `game.NAME`)."""
    if game.reward.form not in ("agent", "team"):
        raise ConfigError(f"game.reward.form: {game.reward.form!r}; allowed: ['agent', 'team']")
    check_training_maps(game.maps)
    try:  # the engine's limits, checked where they are written
        RuleValues(winning_score=game.winning_score, tick_limit=game.tick_limit)
    except ConfigError as err:
        raise ConfigError(f"game.{err}") from None
    if not 0 <= game.free_paths <= 64:
        raise ConfigError(f"game.free_paths: must be in 0-64 directions, got {game.free_paths}")
    if not isinstance(game.route_field, bool):
        raise ConfigError(f"game.route_field: must be true or false, got {game.route_field!r}")
    if not 0.0 <= game.layouts.dropout < 1.0:
        raise ConfigError(f"game.layouts.dropout: must be in [0, 1), got {game.layouts.dropout}")
    if game.layouts.variants < 1:
        raise ConfigError(f"game.layouts.variants: must be at least 1, got {game.layouts.variants}")
    for i, stage in enumerate(game.curriculum):
        where = f"game.curriculum[{i}]"
        if not isinstance(stage, Stage):
            raise ConfigError(f"{where}: expected a Stage, got {type(stage).__name__}")
        if not stage.maps or not stage.rosters:
            raise ConfigError(f"{where}: needs at least one map and one roster pair")
        check_training_maps(stage.maps)
        if stage.steps < 0 or stage.winning_score < 1:
            raise ConfigError(f"{where}: steps must be >= 0 and winning_score >= 1")
        if stage.progress not in PROGRESS:
            raise ConfigError(f"{where}.progress: {stage.progress!r}; allowed: {list(PROGRESS)}")
    return game


def load_curriculum(source: str) -> tuple[Stage, ...]:
    """`builtin` (the paper's curriculum), or a JSON file holding a list of stages, each an
    object with every `Stage` field (`maps`, `rosters` as [team A, team B] pairs,
    `winning_score`, `steps`, `progress`, `threshold`); checked like a saved config."""
    if source == "builtin":
        return BUILTIN_CURRICULUM
    try:
        data = json.loads(Path(source).read_text())
    except (OSError, ValueError) as err:
        raise ConfigError(f"curriculum: cannot read {source!r} as JSON ({err})") from None
    if not isinstance(data, list) or not data:
        raise ConfigError(f"curriculum: {source!r} must hold a non-empty list of stages")
    stages = typed(data, tuple[Stage, ...], "curriculum")
    check(TDMGame(curriculum=stages))
    return stages
