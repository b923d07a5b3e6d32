"""The PPO baselines end to end at tiny sizes: every variant trains for a few updates with legal
actions only, a saved and resumed run repeats the uninterrupted one exactly, the opponent mix
splits the games by its weights, and training refuses test maps and scenarios."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest

import marl_bgs
from marl_bgs import ConfigError, Policy
from marl_bgs.tdm.mode import TeamDeathmatch
from marl_bgs_train.config import OpponentMix
from marl_bgs_train.learners import make_train
from marl_bgs_train.networks import init_groups
from marl_bgs_train.opponents import opponent_slices
from marl_bgs_train.policy import ActorSpec, network_policy
from marl_bgs_train.ppo import PPOTrainer
from marl_bgs_train.tdm.game import LayoutVariation, RewardSettings, TDMGame
from marl_bgs_train.testing import assert_resumes_exactly
from marl_bgs_train.testing import tiny_config as tiny


@pytest.fixture(scope="module")
def trainer() -> PPOTrainer:
    """Recurrent IPPO against current weights, saved copies and `rush` (the tiny config; the
    run tests build the same trainer and so share its compiled program)."""
    return make_train(tiny("ippo-rnn"))


def _frozen_network() -> Policy:
    """A frozen opponent as the pool usually holds one: a network policy (fixed weights)."""
    spec = ActorSpec("tdm", TDMGame(), 5, 8, True, "factored", "all", 0.01)
    params = init_groups(spec.network(), jax.random.key(5), 1, TeamDeathmatch().spec.obs_size)
    return network_policy(spec, params, name="frozen-net")


def test_recurrent_ippo_trains_legally_and_resumes_bit_for_bit(trainer, tmp_path):
    init = jax.jit(trainer.init)
    state = init(jax.random.key(7))
    history = []
    for _ in range(3):  # one compiled update program, called three times
        state, metrics = trainer.run(state, 1)
        history.append(jax.device_get(metrics))
    assert int(state.update) == 3
    assert int(state.steps) == 3 * 16
    assert int(state.copies_saved) == 3  # one copy per 16 game steps
    for m in history:
        assert int(m["repaired_actions"][0]) == 0  # masked heads: the engine never repairs
        assert all(np.isfinite(np.asarray(v)).all() for v in m.values())
    finished = sum(int(m["games"][0]) for m in history)
    assert finished >= 4  # tick limit 6: every game ends within 12 ticks
    assert finished == sum(int(m[k][0]) for m in history for k in ("wins", "draws", "losses"))

    # N + M updates equal N, save, restore into a fresh target, M
    assert_resumes_exactly(trainer, jax.random.key(7), 2, tmp_path / "run", state, history[-1])


def test_a_state_from_an_eager_init_runs_as_the_compiled_init_does(trainer):
    """`run` donates its state; an eager `init` puts one zeros array in two fields (both
    memories), which must not make the donation fail (`programs.distinct_buffers`)."""
    eager = trainer.init(jax.random.key(3))
    assert eager.actor_carry is eager.critic_carry  # the case this guards
    compiled = jax.jit(trainer.init)(jax.random.key(3))
    ran = [jax.device_get(trainer.run(s, 1)) for s in (eager, compiled)]
    for a, b in zip(*(jax.tree_util.tree_leaves(r) for r in ran), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_opponent_slices_follow_the_mix():
    assert opponent_slices(512, (0.6, 0.2, 0.2)) == (307, 103, 102)  # quotas 307.2, 102.4 x 2
    assert opponent_slices(4, (0.6, 0.2, 0.2)) == (2, 1, 1)
    assert opponent_slices(5, (1.0, 0.0, 0.0)) == (5, 0, 0)
    for n in range(1, 40):
        for weights in ((0.6, 0.2, 0.2), (0.05, 0.9, 0.05), (0.0, 1.0, 3.0)):
            counts = opponent_slices(n, weights)
            quotas = np.asarray(weights) * n / sum(weights)
            assert sum(counts) == n
            assert np.all(np.abs(np.asarray(counts) - quotas) < 1.0)


def test_a_batch_with_no_fixed_game_still_builds_its_program():
    """A scripted team in the mix but too few games for it (3, 1, 0): the update still traces
    (it once failed on the fixed policies' memories); traced only, nothing compiles."""
    mix = OpponentMix(current=0.6, copies=0.3, frozen=0.0, scripted=0.1, num_copies=2,
                      copy_every=16, scripted_teams=("rush",))  # fmt: skip
    train = make_train(tiny("ippo-rnn", opponents=mix))
    assert train.slices == (3, 1, 0)
    assert len(train.fixed) == 1
    state, _ = jax.eval_shape(train, jax.random.key(0))
    assert state.opponents.memories == jax.eval_shape(train._fixed_memories, jax.random.key(1))


def test_opponent_mix_draws_each_category_at_its_weight(trainer):
    # tiny config: 4 games; no frozen pool, so its 0.2 joins the current weights' 0.4
    assert trainer.slices == (2, 1, 1)
    draw = jax.jit(jax.vmap(trainer._draw, in_axes=(0, None)))
    keys = jax.random.split(jax.random.key(3), 4000)
    kind, pool = (np.asarray(a) for a in draw(keys, 0))
    assert not (pool > 0).any()  # no copy saved yet: the copy game plays the current weights
    np.testing.assert_array_equal(kind[:, :3], 0)
    np.testing.assert_array_equal(kind[:, 3], 1)  # the fixed game plays rush
    kind, pool = (np.asarray(a) for a in draw(keys, 5))
    np.testing.assert_array_equal(pool[:, [0, 1, 3]], 0)
    np.testing.assert_allclose(np.mean(pool[:, 2] == 1), 0.5, atol=0.03)  # both kept copies
    assert set(np.unique(pool[:, 2])) == {1, 2}  # (num_copies = 2), uniformly
    with_frozen = make_train(tiny("ippo-rnn", num_envs=10), frozen=[_frozen_network()])
    assert with_frozen.slices == (4, 2, 4)  # 0.4, 0.2, 0.2 + 0.2
    draw = jax.jit(jax.vmap(with_frozen._draw, in_axes=(0, None)))
    kind, pool = (np.asarray(a) for a in draw(keys, 5))
    assert set(np.unique(kind[:, 6:])) == {1, 2}  # the frozen network or rush
    np.testing.assert_allclose(np.mean(kind[:, 6:] == 1), 0.5, atol=0.02)
    assert not (kind[:, :6] > 0).any()
    assert not (pool[:, 6:] > 0).any()


VARIED = LayoutVariation(dropout=0.3, variants=1)


@pytest.mark.parametrize(
    ("preset", "changes"),
    [
        ("ippo-ff", {"sharing": "none", "frozen": True}),
        ("mappo-rnn", {"heads": "flat", "sharing": "class", "rosters": ("MWH", "RP")}),
        ("mappo-ff", {"free_paths": 4, "route_field": True, "layouts": VARIED}),
    ],
)
def test_every_ppo_variant_trains_a_few_updates(preset, changes):
    """Other heads, sharing modes, roster sizes and critics; a frozen network team in one."""
    changes = dict(changes)
    frozen = [_frozen_network()] if changes.pop("frozen", False) else []
    mix = OpponentMix(current=0.5, frozen=0.3, scripted_teams=())
    trainer = make_train(tiny(preset, opponents=mix, **changes), frozen=frozen)
    state, metrics = trainer.run(jax.jit(trainer.init)(jax.random.key(1)), 2)
    metrics = jax.device_get(metrics)
    assert int(metrics["repaired_actions"].sum()) == 0
    assert all(np.isfinite(np.asarray(v)).all() for v in metrics.values())
    assert float(metrics["entropy"][0]) > 0
    before = jax.jit(trainer.init)(jax.random.key(1)).actor
    moved = jax.tree_util.tree_map(
        lambda a, b: float(np.abs(np.asarray(a) - b).max()), state.actor, before
    )
    assert max(jax.tree_util.tree_leaves(moved)) > 0  # the actor learned something


def test_configs_that_differ_in_data_alone_share_compiled_programs(trainer):
    # The length of a run and its sweepable settings are data: such configs share one program,
    # found in the program cache (no trainer is hashed as a static argument).
    build = lambda: pytest.fail("compiled again")  # noqa: E731
    program = trainer._program(("run", 1), lambda: jax.jit(trainer._updates(1)))
    for same in (tiny("ippo-rnn", total_steps=320), tiny("ippo-rnn", entropy_coef=0.3)):
        assert make_train(same)._program(("run", 1), build) is program
    other = make_train(tiny("ippo-rnn", gamma=0.9))._program(("run", 1), lambda: "new")
    assert other == "new"


def test_training_refuses_test_maps_scenarios_and_bad_settings(tmp_path):
    with pytest.raises(ConfigError, match="maps: 47"):
        make_train(tiny("ippo-rnn", maps=(0, 47)))
    arena = tmp_path / "arena.json"  # a scenario's arena saved as a custom map
    spec = marl_bgs.scenarios.load(3).arena
    fields = {"format": "marl-bgs-map-v1", "id": 0, "name": "mine", "split": "custom"}
    arena.write_text(json.dumps({**fields, "obstacles": list(spec.obstacles)}))
    with pytest.raises(ConfigError, match="the arena of scenario 3"):
        make_train(tiny("ippo-rnn", maps=(0, str(arena))))
    with pytest.raises(ConfigError, match="minibatches"):
        make_train(tiny("ippo-rnn", minibatches=3))
    with pytest.raises(ConfigError, match="sharing"):
        make_train(tiny("ippo-rnn", sharing="team"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="opponents"):
        make_train(tiny("ippo-rnn", opponents=OpponentMix(current=-1.0)))
    assert RewardSettings().form == "agent"
