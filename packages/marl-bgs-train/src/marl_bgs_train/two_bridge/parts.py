"""Two-Bridge's training parts (`marl_bgs_train.modes.TrainParts`, entry point
`marl_bgs_train.modes`: two-bridge): one team of five Marines against the env's own enemies;
the game section (variants), a one-hot Marine id beside every input, the paper's minimap
encoder, a game's win or loss, the paper's checkpoint scoring (32 greedy episodes of the run's
variants) and the paper's three baselines as presets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
from jax.sharding import Mesh

import marl_bgs
from marl_bgs import BatchedEnv
from marl_bgs.two_bridge import OUTCOMES, TwoBridge
from marl_bgs.two_bridge.layout import (
    COMBAT_WIN,
    ENEMY_COUNTS,
    NAVIGATION_WIN,
    NUM_FRIENDS,
    RUNNING,
)
from marl_bgs.two_bridge.views import MINIMAP_SIZE
from marl_bgs_train.config import ValidationSettings
from marl_bgs_train.heads import ActionHeads, flat_heads
from marl_bgs_train.modes import TrainParts
from marl_bgs_train.two_bridge.encoder import MinimapEncoder
from marl_bgs_train.two_bridge.game import BridgeGame, check
from marl_bgs_train.two_bridge.presets import presets

if TYPE_CHECKING:  # pandas is imported where validation runs
    import pandas as pd

MEASURES = tuple(name.replace(" ", "_") for name in OUTCOMES[1:])  # each outcome's share


def build_env(game: BridgeGame, num_envs: int, gamma: float, mesh: Mesh | None) -> BatchedEnv:
    """The training games of `game` (the paper's reward: `gamma` does not enter it), split
    over `mesh`'s devices."""
    del gamma
    return marl_bgs.make(
        "two-bridge", variant=list(game.names), num_envs=num_envs, tick_limit=game.tick_limit,
        mesh=mesh,
    )  # fmt: skip


def heads(game: BridgeGame) -> ActionHeads:
    """The one head over the Marines' actions (their count grows with the enemy count)."""
    size = TwoBridge(num_enemies=ENEMY_COUNTS[game.names[0].split("_")[0]]).spec.action_heads[0]
    return flat_heads(size, lambda choice: choice[..., None], lambda actions: actions[..., 0])


def marine_ids(obs: jax.Array, game: BridgeGame, memory: Any) -> jax.Array:
    """A one-hot Marine id [..., 5, 5] for inputs [..., 5, D] (the Marines share one
    observation; the id tells a shared network which one acts)."""
    del game, memory
    return jnp.broadcast_to(jnp.eye(NUM_FRIENDS), (*obs.shape[:-1], NUM_FRIENDS))


def won(outcome: jax.Array) -> jax.Array:
    """Whether each outcome code is a navigation or combat win."""
    return (outcome == NAVIGATION_WIN) | (outcome == COMBAT_WIN)


def result(outcome: jax.Array) -> jax.Array:
    """Outcome codes as the learners count them: 0 running, 1 won, 2 lost."""
    return jnp.where(outcome == RUNNING, 0, jnp.where(won(outcome), 1, 2))


def game_end(ended: Any, info: dict[str, Any]) -> tuple[jax.Array, jax.Array]:
    """A game's margin, 1 for a win and 0 else (so a log's mean margin is the win rate), and no
    repaired actions."""
    del ended
    wins = won(info["outcome"]).astype(jnp.int32)
    return wins, jnp.zeros_like(wins)


def validation_games(games: pd.DataFrame) -> pd.DataFrame:
    """Per evaluated episode: a margin of 1 for a win (a checkpoint's score is its win rate, as
    the paper scores them) and a 0/1 column per outcome."""
    outcomes = zip(MEASURES, OUTCOMES[1:], strict=True)
    shares = {m: (games["outcome"] == name).astype(float) for m, name in outcomes}
    return games.assign(margin=(games["result"] == "win").astype(float), **shares)


PARTS = TrainParts(
    settings=BridgeGame,
    build_env=build_env,
    heads={"flat": heads},
    check=check,
    features=marine_ids,
    feature_width=lambda game: NUM_FRIENDS,
    game_end=game_end,
    validation=ValidationSettings(games_per_map=32, batch_size=32, greedy=True),
    validation_games=validation_games,
    presets=presets,
    layout_setting="variants",
    result=result,
    encoder=MinimapEncoder,
    own_layouts=lambda game: game.names,
    shared_inputs=MINIMAP_SIZE,
    measures=MEASURES,
)
