"""Curricula through the engine's start-state pools: new games start from the current stage (its
maps, rosters and winning score) while running games finish as they began; stages move on by
game steps or by a progress signal inside one compiled run; the built-in curriculum grows teams
1v1 -> 5v5 on maps 0-11 with a rising winning score; stages are checked and saved with a run."""

from __future__ import annotations

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from marl_bgs import ConfigError, team_inputs
from marl_bgs.tdm.mode import tdm_pool
from marl_bgs_train import checkpoints
from marl_bgs_train.config import from_dict, to_dict
from marl_bgs_train.learners import make_train
from marl_bgs_train.tdm.curriculum import Curriculum, CurriculumState, vary_layouts
from marl_bgs_train.tdm.game import BUILTIN_CURRICULUM, LayoutVariation, Stage, TDMGame
from marl_bgs_train.testing import tiny_config

TWO_STAGES = (
    Stage(maps=(0,), rosters=(("M", "W"),), winning_score=2, steps=16),
    Stage(maps=(3,), rosters=(("MW", "HR"),), winning_score=3),
)


def _games(trainer, state):
    """Team A's roster (class ids), map and winning score of every running game."""
    inputs, _ = team_inputs(trainer.env, state.env_state)
    roster = np.asarray(inputs.views.public.roster_class[:, 0, :5]).astype(int)
    env = jax.device_get(state.env_state)
    return roster, np.asarray(env.map_id), np.asarray(env.rules.winning_score)


def test_stages_move_by_game_steps_and_new_games_start_from_the_current_stage():
    trainer = make_train(tiny_config("ippo-rnn", curriculum=TWO_STAGES))
    state = jax.jit(trainer.init)(jax.random.key(0))
    roster, maps, score = _games(trainer, state)
    assert (roster == [1, 0, 0, 0, 0]).all()  # 1v1: a Mage
    assert (maps == 0).all()
    assert (score == 2).all()
    state, first = trainer.run(state, 1)  # 16 game steps: the stage's budget
    assert int(first["stage"][0]) == 0
    assert int(state.curriculum.stage) == 1
    assert int(state.curriculum.entered) == 16
    # no game finished yet (tick limit 6 > 4 ticks): every game still plays stage 0's setup
    assert (_games(trainer, state)[0] == [1, 0, 0, 0, 0]).all()
    state, second = trainer.run(state, 1)
    assert int(second["games"][0]) == 4  # all four ended at tick 6 and restarted in stage 1
    roster, maps, score = _games(trainer, state)
    assert (roster == [1, 2, 0, 0, 0]).all()
    assert (maps == 3).all()
    assert (score == 3).all()
    for _ in range(2):  # one update per call: `run`'s program above (its count is static)
        state, _ = trainer.run(state, 1)
    assert int(state.curriculum.stage) == 1  # the last stage never ends


def test_a_progress_signal_moves_the_stage():
    stages = (
        Stage(maps=(0,), rosters=(("M", "W"),), progress="reward_per_tick", threshold=-1e9),
        TWO_STAGES[1],
    )
    trainer = make_train(tiny_config("ippo-rnn", curriculum=stages))
    assert trainer.starts.curriculum is not None
    state, _ = trainer.run(jax.jit(trainer.init)(jax.random.key(0)), 1)
    assert int(state.curriculum.stage) == 1  # any reward per tick reaches -1e9
    # the rule itself, on hand-made update metrics: below the threshold nothing moves
    games = {"games": jnp.int32(3), "wins": jnp.int32(3), "margin_sum": jnp.int32(9),
             "reward_per_tick": jnp.float32(-2e9)}  # fmt: skip
    first = CurriculumState.create()
    assert int(trainer.starts.curriculum.advance(first, jnp.int32(16), games).stage) == 0
    win_rate = Curriculum((dataclasses.replace(stages[0], progress="win_rate", threshold=1.0),
                           TWO_STAGES[1]), tick_limit=6)  # fmt: skip
    assert int(win_rate.advance(first, jnp.int32(16), games).stage) == 1
    assert int(win_rate.advance(first, jnp.int32(16), {**games, "wins": 2}).stage) == 0


def test_the_builtin_curriculum_grows_teams_and_the_winning_score():
    assert len(BUILTIN_CURRICULUM) == 5
    for k, stage in enumerate(BUILTIN_CURRICULUM, start=1):
        assert stage.maps == tuple(range(12))
        assert stage.winning_score == 4 * k
        assert all(len(a) == len(b) == k for a, b in stage.rosters)
        for side in (0, 1):  # every class plays on both sides
            assert set("".join(pair[side] for pair in stage.rosters)) == set("MWHRP")
        assert (stage.steps > 0) == (k < 5)
    trainer = make_train(tiny_config("ippo-rnn", curriculum=BUILTIN_CURRICULUM))
    assert trainer.starts.curriculum is not None
    assert trainer.starts.curriculum.pool.size == 5 * 12 * 5  # stages x maps x roster pairs
    weights = np.asarray(trainer.starts.curriculum.weights)
    np.testing.assert_allclose(weights.sum(1), 1.0, rtol=1e-6)
    assert ((weights > 0).sum(0) == 1).all()  # every entry belongs to exactly one stage


def test_stages_are_checked_and_saved_with_the_run(tmp_path):
    config = tiny_config("ippo-rnn", curriculum=TWO_STAGES)
    assert from_dict(json.loads(json.dumps(to_dict(config)))) == config
    checkpoints.save_config(tmp_path, config)
    assert checkpoints.load_config(tmp_path) == config
    with pytest.raises(ConfigError, match="maps: 47"):
        make_train(tiny_config("ippo-rnn", curriculum=(Stage(maps=(47,)),)))
    with pytest.raises(ConfigError, match=r"curriculum\[0\].progress"):
        make_train(tiny_config("ippo-rnn", curriculum=(Stage(progress="elo"),)))  # type: ignore[arg-type]
    data = json.loads(json.dumps(to_dict(config)))
    data["game"]["curriculum"][1]["rosters"] = "MW"
    with pytest.raises(ConfigError, match="rosters"):
        from_dict(data)
    with pytest.raises(ConfigError, match="rosters"):
        make_train(tiny_config("ippo-rnn", curriculum=(Stage(rosters=(("MWQ", "M"),)),)))


def test_layout_variants_switch_the_same_obstacles_off_on_both_ends_and_keep_the_originals():
    pool = tdm_pool([0, 3])
    variation = LayoutVariation(dropout=0.5, variants=3, seed=1)
    varied = vary_layouts(pool, variation)
    assert vary_layouts(pool, LayoutVariation()) is pool  # off by default
    assert varied.size == 4 * pool.size
    weights = np.asarray(varied.weights)
    np.testing.assert_allclose(weights, weights[0], rtol=1e-6)  # each as often as an original
    states = jax.device_get(varied.states)
    active = np.asarray(states.obstacles.active).reshape(4, pool.size, 2, -1)
    free = np.asarray(states.free).reshape(4, pool.size, 2, *states.free.shape[2:])
    original = np.asarray(jax.device_get(pool.states.obstacles.active))
    np.testing.assert_array_equal(active[0], original)  # the originals come first, unchanged
    for copy in range(1, 4):
        assert (active[copy] <= original).all()  # only switched off, never on
        np.testing.assert_array_equal(active[copy, :, 0], active[copy, :, 1])  # both ends alike
        assert (free[copy] >= free[0]).all()  # a switched-off obstacle blocks nothing
    assert (active[1:] < original).any()
    assert (free[1:] > free[0]).any()
    assert active[1:].sum() > 0.3 * 3 * original.sum()  # about half stay (chance 0.5)
    again = jax.device_get(vary_layouts(pool, variation).states.obstacles.active)
    np.testing.assert_array_equal(np.asarray(again).reshape(active.shape), active)  # by seed
    other = vary_layouts(pool, dataclasses.replace(variation, seed=2))
    assert (np.asarray(other.states.obstacles.active).reshape(active.shape) != active).any()


def test_a_run_with_layout_variants_starts_its_games_from_them():
    layouts = LayoutVariation(dropout=0.4, variants=2)
    trainer = make_train(tiny_config("ippo-rnn", layouts=layouts))
    assert trainer.starts.start_pool.size == 3 * 2  # maps 0 and 3, the originals and two variants
    staged = make_train(tiny_config("ippo-rnn", curriculum=TWO_STAGES, layouts=layouts))
    assert staged.starts.curriculum is not None
    assert staged.starts.curriculum.pool.size == 3 * 2
    for bad, match in (({"dropout": 1.0}, "layouts.dropout"), ({"variants": 0}, "variants")):
        with pytest.raises(ConfigError, match=match):
            make_train(tiny_config("ippo-rnn", layouts=LayoutVariation(**bad)))


def test_game_defaults_are_the_engines_rule_values() -> None:
    # The engine's RuleValues and default rosters own the game's defaults; configs refer to them.
    from marl_bgs.tdm.config import DEFAULT_ROSTERS, RuleValues
    from marl_bgs_train.config import LearnerConfig

    rules = RuleValues()
    game = LearnerConfig().game  # the default mode's game section: Team Deathmatch's
    assert isinstance(game, TDMGame)
    assert (game.winning_score, game.tick_limit) == (rules.winning_score, rules.tick_limit)
    assert game.rosters == DEFAULT_ROSTERS == ("MWHRP", "MWHRP")
    assert Stage().winning_score == rules.winning_score
    assert Stage().rosters == (DEFAULT_ROSTERS,)
