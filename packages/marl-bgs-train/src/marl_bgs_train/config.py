"""Typed training configs: plain frozen dataclasses that compose, with the paper's defaults
(Tables S9-S10, Section S6) and `key=value` overrides from the command line.

A config names its `mode` (a mode id or alias) and holds that mode's `game` section (the mode's
own settings dataclass, `marl_bgs_train.modes`): everything else is the learner's and means the
same in every mode. Why dataclasses and not Hydra (which the paper used): a frozen dataclass is
hashable, so a whole config is a static argument of a compiled program; its fields are
type-checked by basedpyright and documented in one place; and overrides need no YAML tree.
`apply_overrides` gives the same `section.field=value` syntax Hydra users know.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar, cast

from marl_bgs import ConfigError
from marl_bgs.core.checks import shown
from marl_bgs_train.networks import SHARING, Sharing

DEFAULT_MODE = "tdm"  # the mode of a config that names none (and of configs saved before modes)


def _parts(mode: str) -> Any:
    from marl_bgs_train.modes import parts

    return parts(mode)


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
    scripted_teams: tuple[str, ...] = ()  # System names (the presets name the mode's own)


@dataclass(frozen=True)
class ValidationSettings:
    """Validation of checkpoints against a panel (paper S6.3): the margin averaged over the
    layout x opponent cells decides the best checkpoint (Team Deathmatch: the point margin, with
    kills and deaths beside it; Two-Bridge: the win rate, with each outcome's share). Empty `maps`
    or `panel`: the mode's own (`TrainParts.validation`: Team Deathmatch plays maps 42, 43, 44
    and 46 against its three scripted teams; Two-Bridge plays the run's own variants against the
    env's enemies, 32 greedy episodes as the paper scores a checkpoint)."""

    maps: tuple[int | str, ...] = ()  # layouts of the config's mode (never test maps)
    panel: tuple[str, ...] = ()  # System names; add a held-out learned model as `ckpt:RUN_DIR`
    games_per_map: int = 4  # per opponent: spawn-swapped pairs, so even
    seed: int = 0
    batch_size: int = 32
    tick_limit: int | None = None  # a game's longest run in ticks (None: the mode's own)
    greedy: bool = False  # the checkpoint plays its most likely actions (Two-Bridge's scoring)


@dataclass(frozen=True)
class LearnerConfig:
    """What every baseline's run needs: sizes, the game's settings, the opponent mix and the
    reward. The learners' configs extend it."""

    name: str = "learner"
    mode: str = DEFAULT_MODE  # a registered mode id or alias with training parts
    game: Any = None  # the mode's game settings (None: its defaults, `TrainParts.settings`)
    recurrent: bool = True  # a GRU between the trunk and the heads
    num_envs: int = 512  # games per update
    rollout: int = 32  # ticks per game per update
    total_steps: int = 2_000_000  # game steps (games x ticks) to train for
    gamma: float = 0.999
    input_scale: float = 0.01  # observations are multiplied by this
    hidden: int = 128
    heads: str = "flat"  # one head over the flat action, or a kind of the mode's own
    sharing: Sharing = "all"  # one network for all agents, one per class, or one per slot
    max_grad_norm: float = 0.5
    opponents: OpponentMix = field(default_factory=OpponentMix)
    teammate_slots: tuple[int, ...] = ()  # team A's slots a frozen teammate plays
    reward_norm: bool = False  # rewards divided by the running std of returns (`RewardScale`)

    ADDED_SETTINGS: ClassVar[dict[str, Any]] = {"reward_norm": False}  # older files: their value

    def __post_init__(self) -> None:
        if self.game is None:
            object.__setattr__(self, "game", _parts(self.mode).settings())

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

    SWEEPABLE: ClassVar[tuple[str, ...]] = (
        "actor_lr", "critic_lr", "entropy_coef", "clip", "gae_lambda",
    )  # fmt: skip  # settings a run reads as data (`marl_bgs_train.hypers`)

    ADDED_SETTINGS: ClassVar[dict[str, Any]] = {"reward_norm": False, "joint_ratio": False}

    name: str = "ippo-rnn"
    centralised_critic: bool = False  # MAPPO: the critic reads the critic-only global state
    joint_ratio: bool = False  # MaskPPO: one ratio per game for the team's joint action
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
    update, the flat action (one head), epsilon-greedy exploration falling linearly from
    `epsilon_start` to `epsilon_finish` over `epsilon_steps` game steps."""

    num_envs: int = 768
    gamma: float = 0.99
    max_grad_norm: float = 10.0
    epsilon_start: float = 1.0
    epsilon_finish: float = 0.05
    epsilon_steps: int = 2_000_000


@dataclass(frozen=True)
class PQNConfig(ValueConfig):
    """Recurrent PQN with VDN mixing (paper Table S10: discount 0.99, TD(lambda 0.85), a
    normalisation layer after each hidden layer, exploration 1.0 -> 0.01 over the first 2.2M
    game steps, 768 games per update). Acts on the flat action."""

    SWEEPABLE: ClassVar[tuple[str, ...]] = ("lr", "td_lambda")

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

    SWEEPABLE: ClassVar[tuple[str, ...]] = ("lr",)

    name: str = "qmix"
    replay_rows: int = 132_096  # game steps kept, as replay_rows // rollout sequences
    batch_sequences: int = 128  # sequences per gradient step
    gradient_steps: int = 4  # gradient steps per update
    learning_starts: int = 32_768  # game steps in the replay before learning starts
    target_every: int = 128  # updates between hard copies into the target networks
    lr: float = 5e-4
    mixer_embed: int = 32  # the mixing network's width
    hypernet_hidden: int = 64  # the hypernetworks' hidden width


Config = PPOConfig | PQNConfig | QMIXConfig
LEARNERS: dict[str, type[Config]] = {
    "ippo-rnn": PPOConfig, "ippo-ff": PPOConfig, "mappo-rnn": PPOConfig, "mappo-ff": PPOConfig,
    "pqn-vdn": PQNConfig, "qmix": QMIXConfig, "maskppo": PPOConfig, "mappo": PPOConfig,
}  # fmt: skip  # the baselines by name, each a preset of every mode that trains them


def presets(mode: str = DEFAULT_MODE) -> Mapping[str, Config]:
    """A mode's presets by learner name (`TrainParts.presets`)."""
    return _parts(mode).presets()


def preset_of(mode: str, learner: str) -> Config:
    """The preset of `learner` for `mode`, or a `ConfigError` naming the modes that have one."""
    from marl_bgs_train.modes import PARTS

    chosen = presets(mode)
    if learner not in chosen:
        having = [m for m in PARTS.modes() if learner in presets(m)]
        raise ConfigError(f"mode: {mode!r} has no {learner} preset; modes that have one: {having}")
    return chosen[learner]


def __getattr__(name: str) -> Any:
    if name == "PRESETS":  # the default mode's presets, built on first use
        return presets()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def validate(config: C) -> C:
    """Check every field (the game section through its mode's parts); raise `ConfigError`
    naming the first bad one and what is allowed."""
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
    parts = _parts(config.mode)
    if config.heads not in parts.head_kinds:
        raise ConfigError(f"heads: {config.heads!r}; allowed: {parts.head_kinds}")
    if config.sharing not in SHARING:
        raise ConfigError(f"sharing: {config.sharing!r}; allowed: {list(SHARING)}")
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
    mix = config.opponents
    weights = (mix.current, mix.copies, mix.frozen, mix.scripted)
    if min(weights) < 0 or sum(weights) <= 0:
        raise ConfigError(f"opponents: weights must be >= 0 with a positive sum, got {weights}")
    if mix.num_copies < 1 or mix.copy_every < 1:
        raise ConfigError("opponents.num_copies and opponents.copy_every: must be at least 1")
    if not isinstance(config.game, parts.settings):
        raise ConfigError(
            f"game: expected the {config.mode} settings ({parts.settings.__name__}), got "
            f"{type(config.game).__name__}"
        )
    parts.check(config.game)
    return config


NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", re.ASCII)  # a number as text


def _parse(value: str, kind: Any, name: str) -> Any:
    """One override's text as the field's type."""
    origin = typing.get_origin(kind)
    if kind is bool:
        if value.lower() not in ("true", "false", "1", "0"):
            raise ConfigError(f"{name}: expected true or false, got {shown(value)}")
        return value.lower() in ("true", "1")
    if kind in (int, float):
        if not NUMBER.fullmatch(value.strip()):  # float() would read "1_0", "١" and "nan" too
            raise ConfigError(f"{name}: expected {kind.__name__}, got {shown(value)}")
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


def has_setting(config: Any, key: str) -> bool:
    """Whether `config` has the setting `key` (`section.field`, as `apply_overrides` reads it)."""
    for name in key.strip().split("."):
        if not dataclasses.is_dataclass(config) or name not in {
            f.name for f in dataclasses.fields(config)
        }:
            return False
        config = getattr(config, name)
    return True


def _set(config: Any, path: list[str], value: str, full: str) -> Any:
    hints = typing.get_type_hints(type(config))
    names = [f.name for f in dataclasses.fields(config)]
    game = getattr(config, "game", None)
    own = {f.name for f in dataclasses.fields(game)} if dataclasses.is_dataclass(game) else set()
    in_game = path[0] in own
    if path[0] not in names and in_game:  # a setting of the mode's game section
        raise ConfigError(
            f"{_cut(full)}: a {getattr(config, 'mode', '')} game setting now; write "
            f"game.{_cut(full)}={_cut(value)}"
        )
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


def typed(value: Any, hint: Any, name: str) -> Any:
    """A JSON value as a field of type `hint` (lists become tuples, objects dataclasses, a union
    its first fitting option), or a `ConfigError` naming the field and what it takes."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return _build(cast(type, hint), value, name)
    if origin in (typing.Union, types.UnionType):  # the first option the value is
        for option in args:
            try:
                return typed(value, option, name)
            except ConfigError:
                continue
        wanted = " or ".join(_WANTED.get(a, str(a)) for a in args)
        raise ConfigError(f"{name}: expected {wanted}, got {shown(value)}")
    if hint is type(None):
        if value is not None:
            raise ConfigError(f"{name}: expected null, got {shown(value)}")
        return None
    if origin is tuple:
        if not isinstance(value, list):
            raise ConfigError(f"{name}: expected a list, got {shown(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(typed(v, args[0], f"{name}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ConfigError(f"{name}: expected {len(args)} values, got {shown(value)}")
        return tuple(
            typed(v, a, f"{name}[{i}]") for i, (v, a) in enumerate(zip(value, args, strict=True))
        )
    if origin is Literal:
        if value not in args or not isinstance(value, str):
            raise ConfigError(f"{name}: {shown(value)}; allowed: {list(args)}")
        return value
    number = isinstance(value, int | float) and not isinstance(value, bool)
    checks = {
        bool: isinstance(value, bool),
        int: number and isinstance(value, int),
        float: number and math.isfinite(value),
        str: isinstance(value, str),
    }
    if not checks[hint]:
        raise ConfigError(f"{name}: expected {_WANTED[hint]}, got {shown(value)}")
    return float(value) if hint is float else value


_WANTED = {
    bool: "true or false", int: "an integer", float: "a finite number", str: "a string",
    type(None): "null",
}  # fmt: skip


def _build(cls: type, raw: Any, where: str) -> Any:
    """A config dataclass from a JSON object with exactly its fields, each checked (those of
    its `ADDED_SETTINGS` may be missing: a file saved before they existed means their values)."""
    names = {f.name for f in dataclasses.fields(cls)}
    if isinstance(raw, dict):
        raw = {**getattr(cls, "ADDED_SETTINGS", {}), **raw}
    if not isinstance(raw, dict) or set(raw) != names:
        got = sorted(map(str, raw)) if isinstance(raw, dict) else type(raw).__name__
        raise ConfigError(f"{where or 'config'}: expected the settings {sorted(names)}, got {got}")
    hints = typing.get_type_hints(cls)
    prefix = f"{where}." if where else ""
    return cls(**{k: typed(v, hints[k], prefix + k) for k, v in raw.items() if k != "game"})


def _game(data: dict[str, Any]) -> dict[str, Any]:
    """A saved config with its mode's game section built: a config saved before modes (neither
    `mode` nor `game`) is the default mode's, its game settings at the top level."""
    if "mode" not in data and "game" not in data:
        settings = _parts(DEFAULT_MODE).settings
        own = {f.name for f in dataclasses.fields(settings)}
        data = {k: v for k, v in data.items() if k not in own} | {
            "mode": DEFAULT_MODE,
            "game": {k: v for k, v in data.items() if k in own},
        }
    if "mode" not in data or "game" not in data:
        return data  # `_build` names what is missing
    mode = data["mode"]
    if not isinstance(mode, str):
        raise ConfigError(f"mode: expected a mode id, got {shown(mode)}")
    return data | {"game": _build(_parts(mode).settings, data["game"], "game")}


def from_dict(data: dict[str, Any]) -> Config:
    """The inverse of `to_dict` (the learner told apart by its own settings), checked: an
    unknown, missing or mistyped setting raises `ConfigError` naming it (a config saved before a
    setting of its class's `ADDED_SETTINGS` existed gets its old meaning; one saved before modes
    is the default mode's), and the result passes `validate`."""
    if not isinstance(data, dict):
        raise ConfigError(f"config: expected an object of settings, got {type(data).__name__}")
    data = _game(data)
    kind = QMIXConfig if "replay_rows" in data else PQNConfig if "td_lambda" in data else PPOConfig
    config = _build(kind, data, "")
    return validate(dataclasses.replace(config, game=data["game"]))
