"""What training needs from a mode, by mode id: `TrainParts`, found through `PARTS`.

A mode's training parts are registered with `register(mode, parts)` or through the entry-point
group `marl_bgs_train.modes` (name: the mode's alias, value: "module:PARTS"). The learners
(`ppo`, `pqn`, `qmix` over `selfplay`), the config family, validation and the command line read
everything that differs between modes from here: the game settings section of a config and its
checks, the env with the learner's reward, the action heads, each slot's class, extra network
inputs, where new games start (a curriculum), what a finished game scores, the validation panel,
the presets and an input encoder (Two-Bridge's minimap convolutions). Team Deathmatch's parts
are `marl_bgs_train.tdm.PARTS`, Two-Bridge's `marl_bgs_train.two_bridge.PARTS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.sharding import Mesh

from marl_bgs import BatchedEnv, ConfigError, PartRegistry, StartPool, TeamInputs
from marl_bgs_train.heads import ActionHeads

if TYPE_CHECKING:
    import pandas as pd


class Starts(Protocol):
    """Where a run's new games start: a pytree state in the trainer's carry, the start pool it
    draws from now (None: the env's own), and how an update's game metrics move it on.
    `varies`: whether the pool changes during a run (a curriculum); one that never does is the
    run's layouts, read as data (`SelfPlay.layouts`)."""

    varies: bool

    def first(self) -> Any: ...
    def pool(self, state: Any) -> StartPool | None: ...
    def advance(self, state: Any, steps: jax.Array, games: dict[str, jax.Array]) -> Any: ...
    def stage(self, state: Any) -> jax.Array: ...


class SamePool:
    """`Starts` of a mode without a curriculum: every game starts from the env's own pool."""

    varies = False

    def first(self) -> jax.Array:
        return jnp.int32(0)

    def pool(self, state: Any) -> None:
        del state

    def advance(self, state: Any, steps: jax.Array, games: dict[str, jax.Array]) -> Any:
        del steps, games
        return state

    def stage(self, state: Any) -> jax.Array:
        return jnp.asarray(state, jnp.int32)


def every_slot(inputs: TeamInputs) -> jax.Array:
    """Class 1 for every own slot [n, team] (a mode without classes or empty slots)."""
    return jnp.ones(inputs.obs.shape[:2], jnp.int32)


def no_game_end(ended: Any, info: dict[str, Any]) -> tuple[jax.Array, jax.Array]:
    """Each game's margin and its team A actions the engine repaired [n], both 0."""
    n = info["outcome"].shape[0]
    del ended
    return jnp.zeros((n,), jnp.int32), jnp.zeros((n,), jnp.int32)


def same_result(outcome: jax.Array) -> jax.Array:
    """The env's outcome codes as they are (0 running, 1 team A won, 2 team B won, 3 draw)."""
    return outcome


def result_margin(games: pd.DataFrame) -> pd.DataFrame:
    """Per evaluated game: a margin of +1 for a win, -1 for a loss and 0 for a draw."""
    result = games["result"]
    return games.assign(margin=(result == "win").astype(float) - (result == "loss").astype(float))


def _replaced(section: Any, path: list[str], value: Any) -> Any:
    """A frozen dataclass with the field at `path` (names of nested sections) set to `value`."""
    if len(path) == 1:
        return dataclasses.replace(section, **{path[0]: value})
    inner = _replaced(getattr(section, path[0]), path[1:], value)
    return dataclasses.replace(section, **{path[0]: inner})


def _no_check(value: Any) -> Any:
    return value


@dataclass(frozen=True, eq=False)
class TrainParts:
    """A mode's training parts; every field after `heads` has a default that fits a mode without
    classes, curricula, extra inputs, validation panel or presets."""

    settings: type  # the frozen dataclass of a config's `game` section (its defaults the mode's)
    build_env: Callable[[Any, int, float, Mesh | None], BatchedEnv]  # (game, num_envs, gamma,
    # mesh) -> env, its games split over the mesh's first axis (one device without one)
    heads: Mapping[str, ActionHeads | Callable[[Any], ActionHeads]]  # by kind (or by game); all
    # modes have `flat` (`heads.flat_heads`)
    check: Callable[[Any], Any] = _no_check  # the game section checked (ConfigError), returned
    check_layouts: Callable[[Any], Any] = _no_check  # layouts a run may play (never test ones)
    slots: Callable[[TeamInputs], jax.Array] = every_slot  # class id per own slot, 0: empty
    num_classes: int = 1  # class ids 1..num_classes (parameter groups of `sharing="class"`)
    features: Callable[[jax.Array, Any, Any], jax.Array] = lambda obs, game, memory: obs[..., :0]
    # (obs [n, A, D], game, memory [n, ...]) -> the inputs added to the scaled observation
    feature_width: Callable[[Any], int] = lambda game: 0  # the width `features` adds
    feature_memory: Callable[[Any], Any] = lambda game: ()  # one game's empty memory for the
    # features of one team (what is worked out once a game from its public map, say)
    remember: Callable[[Any, Any, jax.Array, jax.Array], Any] = lambda game, memory, start, obs: (
        memory
    )  # (game, memory [n, ...], start [n], obs [n, A, D]) -> memory worked out for the games
    # that start this tick
    starts: Callable[[BatchedEnv, Any], Starts] = lambda env, game: SamePool()
    game_end: Callable[[Any, dict[str, Any]], tuple[jax.Array, jax.Array]] = no_game_end
    validation: Any = None  # the default `ValidationSettings` (None: no validation panel)
    validation_games: Callable[[pd.DataFrame], pd.DataFrame] = result_margin  # adds `margin`
    presets: Callable[[], Mapping[str, Any]] = dict  # learner name -> config of this mode
    layout_setting: str = ""  # the game setting read with the layout grammar (`maps`)
    curriculum: Callable[[Any, str], Any] | None = None  # (game, source) -> game with its stages
    result: Callable[[jax.Array], jax.Array] = same_result  # outcome codes -> 0 / 1 A won / 2 / 3
    encoder: Callable[[], nn.Module] | None = None  # a module every network input passes first,
    # called as `encoder(x, agents=...)` (`agents`: x's axis -2 is the team's agents)
    trained_layouts: Callable[[Any], tuple[int, ...]] = lambda game: ()  # shipped ones, by id
    own_layouts: Callable[[Any], tuple[Any, ...]] = lambda game: ()  # the layouts a run plays
    shared_inputs: int = 0  # the observation's leading values every agent of a team sees alike
    # (Two-Bridge: its minimap), kept once per team in QMIX's replay
    measures: tuple[str, ...] = ()  # columns `validation_games` adds beside the margin
    game_hyper: Callable[[Any], dict[str, float]] = lambda game: {}  # game settings read as
    # data, by their `game.` names (Team Deathmatch: its reward's shaping weights)
    shaping: Callable[[Any, Mapping[str, jax.Array], float], Callable[..., jax.Array] | None] = (
        lambda game, hyper, gamma: None
    )  # (game, hyper, gamma) -> the reward those settings weigh, one game's (state, next_state,
    # facts) -> [agents], added to the env's; None when they weigh nothing

    def program_game(self, game: Any) -> Any:
        """The game section as a compiled program sees it: its layouts blanked (a run's start
        pool is data, `SelfPlay.layouts`) and each setting of `game_hyper` at 1 where it is set
        (which terms the reward has is the program's; their weights are data)."""
        if self.layout_setting:
            game = dataclasses.replace(game, **{self.layout_setting: ()})
        for name, value in self.game_hyper(game).items():
            game = _replaced(game, name.split(".")[1:], 1.0 if value else 0.0)
        return game

    def with_curriculum(self, config: Any, source: str) -> Any:
        """`config` with the curriculum `source` names (`--curriculum`), or a `ConfigError` for
        a mode without curricula."""
        if self.curriculum is None:
            raise ConfigError(f"--curriculum: mode {config.mode!r} has no curricula")
        return dataclasses.replace(config, game=self.curriculum(config.game, source))

    def action_heads(self, kind: str, game: Any = None) -> ActionHeads:
        """The heads of `kind` for the game section `game` (a `ConfigError` naming the mode's
        kinds); a mode whose action count depends on its game gives a function of it."""
        if kind not in self.heads:
            raise ConfigError(f"heads: {kind!r}; allowed: {self.head_kinds}")
        chosen = self.heads[kind]
        return chosen if isinstance(chosen, ActionHeads) else chosen(game)

    @property
    def head_kinds(self) -> list[str]:
        """Every head kind of the mode."""
        return list(self.heads)


PARTS = PartRegistry("marl_bgs_train.modes", "training parts", TrainParts)
register = PARTS.register  # give a mode (an id or alias) its training parts
parts = PARTS.get  # the training parts of a mode id or alias
