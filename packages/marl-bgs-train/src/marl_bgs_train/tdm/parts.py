"""Team Deathmatch's training parts (`marl_bgs_train.modes.TrainParts`, entry point
`marl_bgs_train.modes`: tdm): the game section, the env with the learner's reward (Table S9 and
shaping), the factored heads, the roster's classes, the free-path inputs, curricula, a finished
game's point margin and repaired actions, the validation panel and the six presets."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
from jax.sharding import Mesh

import marl_bgs
from marl_bgs import BatchedEnv, TeamInputs
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.lifecycle import terminal_reward
from marl_bgs_train.config import ValidationSettings
from marl_bgs_train.modes import TrainParts
from marl_bgs_train.tdm import features, rewards
from marl_bgs_train.tdm.actions import HEADS
from marl_bgs_train.tdm.curriculum import TDMStarts
from marl_bgs_train.tdm.game import (
    VALIDATION_PANEL_MAPS,
    RewardSettings,
    TDMGame,
    check,
    check_training_maps,
    load_curriculum,
    trained_maps,
)
from marl_bgs_train.tdm.presets import presets

if TYPE_CHECKING:  # pandas is imported where validation runs
    import pandas as pd


SHAPING = ("score_shaping", "health_potential", "approach_potential")  # weights read as data


def base_reward(settings: RewardSettings) -> Any:
    """The env's `reward_fn`: the result and, with `combat`, Table S9's terms (the shaping
    weights are data, added by `shaping`)."""
    return rewards.combat_reward(form=settings.form) if settings.combat else terminal_reward


def game_hyper(game: TDMGame) -> dict[str, float]:
    """The reward's shaping weights, by their `game.` names (sweepable in one program)."""
    return {f"game.reward.{name}": getattr(game.reward, name) for name in SHAPING}


def shaping(game: TDMGame, hyper: Mapping[str, jax.Array], gamma: float) -> Any:
    """The shaping terms `game` turns on (its non-zero weights), each at unit scale times its
    weight from `hyper`, summed: one game's (state, next_state, facts) -> [10]; None when all
    weights are 0. The terms are linear in their weight (`rewards`), so this pays what the
    weighted shapers of `rewards.shaped` pay."""
    units = {
        "score_shaping": rewards.score_shaping(1.0),
        "health_potential": rewards.potential_shaping(rewards.health_potential(1.0), gamma),
        "approach_potential": rewards.potential_shaping(rewards.approach_potential(1.0), gamma),
    }
    on = [name for name in SHAPING if getattr(game.reward, name)]
    if not on:
        return None

    def shaped(state: Any, next_state: Any, facts: Any) -> jax.Array:
        terms = [hyper[f"game.reward.{n}"] * units[n](state, next_state, facts) for n in on]
        return sum(terms[1:], terms[0])

    return shaped


def build_env(game: TDMGame, num_envs: int, gamma: float, mesh: Mesh | None) -> BatchedEnv:
    """The training games of `game`, paying the learner's reward but its shaping (`shaping`),
    split over `mesh`'s devices."""
    del gamma  # only the shaping reads it
    return marl_bgs.make(
        "tdm",
        map_id=list(game.maps),
        num_envs=num_envs,
        rosters=game.rosters,
        winning_score=game.winning_score,
        tick_limit=game.tick_limit,
        reward_fn=base_reward(game.reward),
        mesh=mesh,
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
    trained_layouts=trained_maps,
    slots=roster_classes,
    num_classes=5,
    features=features.features,
    feature_width=features.feature_width,
    feature_memory=features.feature_memory,
    remember=features.remember,
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
    game_hyper=game_hyper,
    shaping=shaping,
)
