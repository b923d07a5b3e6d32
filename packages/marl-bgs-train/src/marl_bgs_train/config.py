"""Typed training configs: plain frozen dataclasses that compose, with the paper's defaults
(Tables S9-S10, Section S6) and `key=value` overrides from the command line.

Why dataclasses and not Hydra (which the paper used): a frozen dataclass is hashable, so a whole
config is a static argument of a compiled program; its fields are type-checked by basedpyright and
documented in one place; and overrides need no YAML tree. `apply_overrides` gives the same
`section.field=value` syntax Hydra users know.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import marl_bgs
from marl_bgs import ConfigError
from marl_bgs.core.checks import shown
from marl_bgs.tdm.classes import LETTERS
from marl_bgs.tdm.config import DEFAULT_ROSTERS, RuleValues
from marl_bgs_train.heads import HEAD_KINDS, HeadKind
from marl_bgs_train.networks import SHARING, Sharing

RewardForm = Literal["agent", "team"]
TRAINING_MAPS: tuple[int, ...] = tuple(marl_bgs.maps.split("train"))
VALIDATION_PANEL_MAPS: tuple[int, ...] = (42, 43, 44, 46)
TEST_MAPS: tuple[int, ...] = tuple(marl_bgs.maps.split("test"))


@dataclass(frozen=True)
class OpponentMix:
    """Who plays team B in each new training game (paper S6.2). Weights are relative; a
    category with nothing in it (no saved copy yet, an empty frozen pool) passes its weight to the
    current weights."""

    current: float = 0.60  # the learner's current weights
    copies: float = 0.20  # one of its newest saved copies, uniformly
    frozen: float = 0.15  # the fixed pool of frozen policies, evenly
    scripted: float = 0.05  # the scripted teams below, evenly
    num_copies: int = 12  # saved copies kept
    copy_every: int = 1_376_256  # game steps between saved copies
    scripted_teams: tuple[str, ...] = ("tdm-alpha", "tdm-beta")


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


@dataclass(frozen=True)
class ValidationSettings:
    """Validation of checkpoints against a panel (paper S6.3): the point margin averaged over the
    map x opponent cells decides the best checkpoint; kills and deaths are kept beside it."""

    maps: tuple[int, ...] = VALIDATION_PANEL_MAPS
    panel: tuple[str, ...] = ("tdm-alpha", "tdm-beta", "tdm-gamma")  # System names; add a
    # held-out learned model as `ckpt:RUN_DIR`
    games_per_map: int = 4  # per opponent: spawn-swapped pairs, so even
    seed: int = 0
    batch_size: int = 32
    tick_limit: int = RuleValues.tick_limit


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
class LearnerConfig:
    """What every baseline's run needs: sizes, the game's settings, the opponent mix and the
    reward. The learners' configs extend it."""

    name: str = "learner"
    recurrent: bool = True  # a GRU between the trunk and the heads
    num_envs: int = 512  # games per update
    rollout: int = 32  # ticks per game per update
    total_steps: int = 2_000_000  # game steps (games x ticks) to train for
    gamma: float = 0.999
    input_scale: float = 0.01  # observations are multiplied by this
    free_paths: int = 0  # directions of the free-path feature added to the input (0: none)
    hidden: int = 128
    heads: HeadKind = "factored"  # 9 x 22 (exact pair mask) or flat 198
    sharing: Sharing = "all"  # one network for all agents, one per class, or one per slot
    max_grad_norm: float = 0.5
    maps: tuple[int, ...] = TRAINING_MAPS  # never a test map
    rosters: tuple[str, str] = DEFAULT_ROSTERS
    winning_score: int = RuleValues.winning_score
    tick_limit: int = RuleValues.tick_limit
    opponents: OpponentMix = field(default_factory=OpponentMix)
    reward: RewardSettings = field(default_factory=RewardSettings)
    layouts: LayoutVariation = field(default_factory=LayoutVariation)
    curriculum: tuple[Stage, ...] = ()  # stages replace maps, rosters and winning_score
    teammate_slots: tuple[int, ...] = ()  # team A's slots a frozen teammate plays (0-4)

    @property
    def steps_per_update(self) -> int:
        """Game steps per update: games x rollout ticks."""
        return self.num_envs * self.rollout

    @property
    def num_updates(self) -> int:
        """Updates in `total_steps` (at least one)."""
        return max(1, self.total_steps // self.steps_per_update)


C = TypeVar("C", bound=LearnerConfig)


@dataclass(frozen=True)
class PPOConfig(LearnerConfig):
    """One PPO baseline (recurrent or feedforward; local or centralised critic). Defaults: paper
    Table S10 and Section S6 for recurrent IPPO."""

    name: str = "ippo-rnn"
    centralised_critic: bool = False  # MAPPO: the critic reads the critic-only global state
    gae_lambda: float = 0.95
    clip: float = 0.2
    entropy_coef: float = 0.01
    epochs: int = 4
    minibatches: int = 2  # split over games (whole sequences)
    value_norm: bool = True
    value_norm_beta: float = 0.999  # per update
    actor_lr: float = 1e-4
    critic_lr: float = 2.5e-4


@dataclass(frozen=True)
class ValueConfig(LearnerConfig):
    """What the value-based baselines share (paper Table S10): discount 0.99, 768 games per
    update, the flat 198-way action, epsilon-greedy exploration falling linearly from
    `epsilon_start` to `epsilon_finish` over `epsilon_steps` game steps."""

    num_envs: int = 768
    gamma: float = 0.99
    heads: HeadKind = "flat"
    max_grad_norm: float = 10.0
    epsilon_start: float = 1.0
    epsilon_finish: float = 0.05
    epsilon_steps: int = 2_000_000


@dataclass(frozen=True)
class PQNConfig(ValueConfig):
    """Recurrent PQN with VDN mixing (paper Table S10: discount 0.99, TD(lambda 0.85), a
    normalisation layer after each hidden layer, exploration 1.0 -> 0.01 over the first 2.2M
    game steps, 768 games per update). Acts on the flat 198-way action."""

    name: str = "pqn-vdn"
    td_lambda: float = 0.85
    epsilon_finish: float = 0.01
    epsilon_steps: int = 2_200_000
    epochs: int = 2
    minibatches: int = 4  # split over games (whole sequences)
    lr: float = 2.5e-4


@dataclass(frozen=True)
class QMIXConfig(ValueConfig):
    """Recurrent QMIX (paper Table S10: discount 0.99, a hard target copy every 128 updates,
    exploration 1.0 -> 0.05 over 2M game steps, a replay of 132,096 rows, 768 games per update).
    A replay row is one game step of team A; rows are kept as whole `rollout`-tick sequences."""

    name: str = "qmix"
    replay_rows: int = 132_096  # game steps kept, as replay_rows // rollout sequences
    batch_sequences: int = 128  # sequences per gradient step
    gradient_steps: int = 4  # gradient steps per update
    learning_starts: int = 32_768  # game steps in the replay before learning starts
    target_every: int = 128  # updates between hard copies into the target networks
    lr: float = 5e-4
    mixer_embed: int = 32  # the mixing network's width
    hypernet_hidden: int = 64  # the hypernetworks' hidden width


PRESETS: dict[str, PPOConfig | PQNConfig | QMIXConfig] = {
    "ippo-rnn": PPOConfig(),
    "ippo-ff": PPOConfig(name="ippo-ff", recurrent=False),
    "mappo-rnn": PPOConfig(name="mappo-rnn", centralised_critic=True),
    "mappo-ff": PPOConfig(
        name="mappo-ff",
        recurrent=False,
        centralised_critic=True,
        actor_lr=3e-4,
        reward=RewardSettings(form="team"),
    ),
    "pqn-vdn": PQNConfig(),
    "qmix": QMIXConfig(),
}

_CHOICES: dict[str, tuple[str, ...]] = {
    "heads": HEAD_KINDS,
    "sharing": SHARING,
    "form": ("agent", "team"),
}


def check_training_maps(maps: Sequence[int | str]) -> tuple[int | str, ...]:
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


def validate(config: C) -> C:
    """Check every field; raise `ConfigError` naming the first bad one and what is allowed."""
    has = lambda name: hasattr(config, name)  # noqa: E731
    positive = (
        "num_envs", "rollout", "total_steps", "epochs", "minibatches", "hidden", "epsilon_steps",
        "replay_rows", "batch_sequences", "gradient_steps", "target_every", "mixer_embed",
        "hypernet_hidden",
    )  # fmt: skip
    for name in filter(has, positive):
        if getattr(config, name) < 1:
            raise ConfigError(f"{name}: must be at least 1, got {getattr(config, name)}")
    if has("minibatches") and config.num_envs % (minibatches := getattr(config, "minibatches", 1)):
        raise ConfigError(
            f"minibatches: must divide num_envs ({config.num_envs}), got {minibatches}"
        )
    unit = (
        "gamma",
        "gae_lambda",
        "value_norm_beta",
        "td_lambda",
        "epsilon_start",
        "epsilon_finish",
    )
    for name in filter(has, unit):
        if not 0.0 <= getattr(config, name) <= 1.0:
            raise ConfigError(f"{name}: must be in [0, 1], got {getattr(config, name)}")
    non_negative = (
        "clip",
        "entropy_coef",
        "input_scale",
        "actor_lr",
        "critic_lr",
        "lr",
        "max_grad_norm",
    )
    for name in filter(has, non_negative):
        if not getattr(config, name) >= 0.0:
            raise ConfigError(f"{name}: must be >= 0, got {getattr(config, name)}")
    for name, allowed in (("heads", HEAD_KINDS), ("sharing", SHARING)):
        if getattr(config, name) not in allowed:
            raise ConfigError(f"{name}: {getattr(config, name)!r}; allowed: {list(allowed)}")
    if isinstance(config, ValueConfig) and config.heads != "flat":
        raise ConfigError(f"heads: {config.heads!r}; allowed for value-based learners: ['flat']")
    if isinstance(config, QMIXConfig):
        sequences = config.replay_rows // config.rollout
        if sequences < config.num_envs:
            raise ConfigError(
                f"replay_rows: must hold one rollout of every game ({config.num_envs} x "
                f"{config.rollout} rows), got {config.replay_rows}"
            )
        if config.learning_starts < 0:
            raise ConfigError(f"learning_starts: must be >= 0, got {config.learning_starts}")
    if config.reward.form not in ("agent", "team"):
        raise ConfigError(f"reward.form: {config.reward.form!r}; allowed: ['agent', 'team']")
    mix = config.opponents
    weights = (mix.current, mix.copies, mix.frozen, mix.scripted)
    if min(weights) < 0 or sum(weights) <= 0:
        raise ConfigError(f"opponents: weights must be >= 0 with a positive sum, got {weights}")
    if mix.num_copies < 1 or mix.copy_every < 1:
        raise ConfigError("opponents.num_copies and opponents.copy_every: must be at least 1")
    check_training_maps(config.maps)
    if not 0 <= config.free_paths <= 64:
        raise ConfigError(f"free_paths: must be in 0-64 directions, got {config.free_paths}")
    if not 0.0 <= config.layouts.dropout < 1.0:
        raise ConfigError(f"layouts.dropout: must be in [0, 1), got {config.layouts.dropout}")
    if config.layouts.variants < 1:
        raise ConfigError(f"layouts.variants: must be at least 1, got {config.layouts.variants}")
    slots = config.teammate_slots
    if any(not 0 <= k < 5 for k in slots) or len(set(slots)) != len(slots) or len(slots) == 5:
        raise ConfigError(
            f"teammate_slots: distinct slots of team A in 0-4, not all five, got {list(slots)}"
        )
    for i, stage in enumerate(config.curriculum):
        where = f"curriculum[{i}]"
        if not isinstance(stage, Stage):
            raise ConfigError(f"{where}: expected a Stage, got {type(stage).__name__}")
        if not stage.maps or not stage.rosters:
            raise ConfigError(f"{where}: needs at least one map and one roster pair")
        check_training_maps(stage.maps)
        if stage.steps < 0 or stage.winning_score < 1:
            raise ConfigError(f"{where}: steps must be >= 0 and winning_score >= 1")
        if stage.progress not in PROGRESS:
            raise ConfigError(f"{where}.progress: {stage.progress!r}; allowed: {list(PROGRESS)}")
    return config


def _parse(value: str, kind: Any, name: str) -> Any:
    """One override's text as the field's type."""
    origin = typing.get_origin(kind)
    if kind is bool:
        if value.lower() not in ("true", "false", "1", "0"):
            raise ConfigError(f"{name}: expected true or false, got {shown(value)}")
        return value.lower() in ("true", "1")
    if kind in (int, float):
        try:
            number = float(value) if kind is float or "e" in value.lower() else int(value)
        except (ValueError, OverflowError):
            raise ConfigError(f"{name}: expected {kind.__name__}, got {shown(value)}") from None
        if not math.isfinite(number) or (kind is int and number != int(number)):
            raise ConfigError(f"{name}: expected {kind.__name__}, got {shown(value)}")
        return kind(number)
    if kind is str:
        return value
    if origin is Literal:
        allowed = typing.get_args(kind)
        if value not in allowed:
            raise ConfigError(f"{name}: {shown(value)}; allowed: {list(allowed)}")
        return value
    if origin is tuple:
        args = typing.get_args(kind)
        item = args[0]
        parts = [p for p in value.split(",") if p]
        if len(args) == 2 and args[1] is not Ellipsis and len(parts) != 2:
            raise ConfigError(f"{name}: expected two comma-separated values, got {shown(value)}")
        return tuple(_parse(p, item, name) for p in parts)
    if isinstance(kind, types.UnionType):
        raise ConfigError(f"{name}: cannot be set from the command line")
    raise ConfigError(f"{name}: cannot be set from the command line")


def _cut(name: str, limit: int = 40) -> str:
    """A setting's name as given, cut so that a hostile one cannot flood a message."""
    return name if len(name) <= limit else f"{name[: limit - 3]}..."


def apply_overrides(config: Any, items: Sequence[str]) -> Any:
    """`section.field=value` overrides (e.g. `gamma=0.99`, `opponents.current=0.5`,
    `maps=0,1,2`) applied to a frozen dataclass config; unknown fields raise `ConfigError`
    listing the known ones."""
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"override {shown(item)}: expected key=value")
        config = _set(config, key.strip().split("."), value.strip(), key.strip())
    return config


def _set(config: Any, path: list[str], value: str, full: str) -> Any:
    hints = typing.get_type_hints(type(config))
    names = [f.name for f in dataclasses.fields(config)]
    if path[0] not in names:
        raise ConfigError(f"{_cut(full)}: unknown setting; known: {', '.join(names)}")
    current = getattr(config, path[0])
    if len(path) > 1:
        if not dataclasses.is_dataclass(current):
            raise ConfigError(f"{_cut(full)}: {_cut(path[0])} has no fields")
        new = _set(current, path[1:], value, full)
    else:
        new = _parse(value, hints[path[0]], full)
    return dataclasses.replace(config, **{path[0]: new})


def to_dict(config: Any) -> dict[str, Any]:
    """A config as plain JSON-ready data (saved beside every checkpoint)."""
    return dataclasses.asdict(config)


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
    base = json.loads(json.dumps(to_dict(PPOConfig())))  # the stages inside a default config
    return from_dict({**base, "curriculum": data}).curriculum


def _typed(value: Any, hint: Any, name: str) -> Any:
    """A JSON value as a field of type `hint` (lists become tuples, objects dataclasses), or a
    `ConfigError` naming the field and what it takes."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, name)
    if origin is tuple:
        if not isinstance(value, list):
            raise ConfigError(f"{name}: expected a list, got {shown(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_typed(v, args[0], f"{name}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ConfigError(f"{name}: expected {len(args)} values, got {shown(value)}")
        return tuple(
            _typed(v, a, f"{name}[{i}]") for i, (v, a) in enumerate(zip(value, args, strict=True))
        )
    if origin is Literal:
        if value not in args or not isinstance(value, str):
            raise ConfigError(f"{name}: {shown(value)}; allowed: {list(args)}")
        return value
    number = isinstance(value, int | float) and not isinstance(value, bool)
    checks = {
        bool: (isinstance(value, bool), "true or false"),
        int: (number and isinstance(value, int), "an integer"),
        float: (number and math.isfinite(value), "a finite number"),
        str: (isinstance(value, str), "a string"),
    }
    ok, wanted = checks[hint]
    if not ok:
        raise ConfigError(f"{name}: expected {wanted}, got {shown(value)}")
    return float(value) if hint is float else value


def _build(cls: Any, raw: Any, where: str) -> Any:
    """A config dataclass from a JSON object with exactly its fields, each checked."""
    names = {f.name for f in dataclasses.fields(cls)}
    if not isinstance(raw, dict) or set(raw) != names:
        got = sorted(map(str, raw)) if isinstance(raw, dict) else type(raw).__name__
        raise ConfigError(f"{where or 'config'}: expected the settings {sorted(names)}, got {got}")
    hints = typing.get_type_hints(cls)
    prefix = f"{where}." if where else ""
    return cls(**{k: _typed(v, hints[k], prefix + k) for k, v in raw.items()})


# Settings added after configs were first saved, with the values that mean what a config
# saved before them did: such a config loads with them; any other missing setting is an error.
ADDED_SETTINGS: dict[str, Any] = {
    "free_paths": 0,
    "layouts": to_dict(LayoutVariation()),
}


def from_dict(data: dict[str, Any]) -> PPOConfig | PQNConfig | QMIXConfig:
    """The inverse of `to_dict` (the learner told apart by its own settings), checked: an
    unknown, missing or mistyped setting raises `ConfigError` naming it (a config saved before
    a setting of `ADDED_SETTINGS` existed gets its old meaning), and the result passes
    `validate`."""
    if not isinstance(data, dict):
        raise ConfigError(f"config: expected an object of settings, got {type(data).__name__}")
    data = {**ADDED_SETTINGS, **data}
    kind = QMIXConfig if "replay_rows" in data else PQNConfig if "td_lambda" in data else PPOConfig
    return validate(_build(kind, data, ""))
