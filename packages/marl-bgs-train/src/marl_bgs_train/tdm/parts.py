"""Team Deathmatch's training parts (`marl_bgs_train.modes.TrainParts`, entry point
`marl_bgs_train.modes`: tdm): the game section, the env with the learner's reward (Table S9 and
shaping), the factored heads, the roster's classes, the free-path inputs, curricula, a finished
game's point margin and repaired actions, the validation panel and the six presets."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp

import marl_bgs
from marl_bgs import BatchedEnv, TeamInputs
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.lifecycle import terminal_reward
from marl_bgs_train.config import ValidationSettings
from marl_bgs_train.modes import TrainParts
from marl_bgs_train.tdm import rewards
from marl_bgs_train.tdm.actions import HEADS
from marl_bgs_train.tdm.curriculum import TDMStarts
from marl_bgs_train.tdm.features import features
from marl_bgs_train.tdm.game import (
    VALIDATION_PANEL_MAPS,
    RewardSettings,
    TDMGame,
    check,
    check_training_maps,
    load_curriculum,
)
from marl_bgs_train.tdm.presets import presets

if TYPE_CHECKING:  # pandas is imported where validation runs
    import pandas as pd


def reward_function(settings: RewardSettings, gamma: float) -> Any:
    """The env's `reward_fn` for these settings (equal settings give equal functions, so one
    compiled step)."""
    base = rewards.combat_reward(form=settings.form) if settings.combat else terminal_reward
    shapers = []
    if settings.score_shaping:
        shapers.append(rewards.score_shaping(settings.score_shaping))
    potentials = (
        (settings.health_potential, rewards.health_potential),
        (settings.approach_potential, rewards.approach_potential),
    )
    for scale, potential in potentials:
        if scale:
            shapers.append(rewards.potential_shaping(potential(scale), gamma))
    return rewards.shaped(base, *shapers) if shapers else base


def build_env(game: TDMGame, num_envs: int, gamma: float) -> BatchedEnv:
    """The training games of `game`, paying the learner's reward."""
    return marl_bgs.make(
        "tdm",
        map_id=list(game.maps),
        num_envs=num_envs,
        rosters=game.rosters,
        winning_score=game.winning_score,
        tick_limit=game.tick_limit,
        reward_fn=reward_function(game.reward, gamma),
    )


def roster_classes(inputs: TeamInputs) -> jax.Array:
    """Class ids of a team's own roster slots [n, 5] (public, read from agent 0's view; 0 for
    an empty slot)."""
    return inputs.views.public.roster_class[:, 0, :TEAM_SIZE].astype(jnp.int32)


def game_end(ended: Any, info: dict[str, Any]) -> tuple[jax.Array, jax.Array]:
    """Team A's point margin of each game and its actions the engine repaired, per game."""
    rejected = info["facts"].move_rejected | info["facts"].combat_rejected
    return ended.score[:, 0] - ended.score[:, 1], jnp.sum(rejected[:, :TEAM_SIZE], axis=1)


def validation_games(games: pd.DataFrame) -> pd.DataFrame:
    """Per evaluated game: the point margin, and team A's kills and deaths."""
    return games.assign(
        margin=games["points_a"] - games["points_b"],
        kills=games["a_kills"],
        deaths=games["a_deaths"],
    )


PARTS = TrainParts(
    settings=TDMGame,
    build_env=build_env,
    heads=HEADS,
    check=check,
    check_layouts=check_training_maps,
    slots=roster_classes,
    num_classes=5,
    features=features,
    feature_width=lambda game: game.free_paths,
    starts=TDMStarts,
    game_end=game_end,
    validation=ValidationSettings(
        maps=VALIDATION_PANEL_MAPS, panel=("tdm-alpha", "tdm-beta", "tdm-gamma")
    ),
    validation_games=validation_games,
    presets=presets,
    layout_setting="maps",
    measures=("kills", "deaths"),
    curriculum=lambda game, source: dataclasses.replace(game, curriculum=load_curriculum(source)),
)
