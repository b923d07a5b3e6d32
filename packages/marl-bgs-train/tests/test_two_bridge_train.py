"""Two-Bridge's baselines as presets of the generic learners: the paper's settings, the single-team
path (the env plays the enemies), outcomes counted as wins and losses, the minimap encoder, Marine
ids, reward standardisation, MaskPPO's joint ratio, and a tiny run through the command line with
the paper's checkpoint scoring (greedy episodes of the run's variant) and a resume."""

from __future__ import annotations

import dataclasses

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import marl_bgs
from marl_bgs import ConfigError, Policy
from marl_bgs.two_bridge import VARIANTS
from marl_bgs.two_bridge.views import MINIMAP_SIZE
from marl_bgs_train import batch, checkpoints
from marl_bgs_train.cli import app
from marl_bgs_train.cli_options import validation_settings
from marl_bgs_train.config import apply_overrides, preset_of, presets, validate
from marl_bgs_train.learners import make_train
from marl_bgs_train.losses import RewardScale, ppo_actor_loss
from marl_bgs_train.ppo import joint
from marl_bgs_train.two_bridge.encoder import EMBED, MinimapEncoder, PatchConv
from marl_bgs_train.two_bridge.game import BridgeGame
from marl_bgs_train.two_bridge.parts import marine_ids
from marl_bgs_train.validation import read_settings

MODE = "two-bridge"
V1_NAVIGATE = VARIANTS.index("V1_Navigate")


def tiny(name: str, **changes) -> object:
    """A preset at test size: 4 games of 12 steps per update, games cut at 12 steps."""
    config = preset_of(MODE, name)
    small: dict = {"num_envs": 4, "rollout": 12, "total_steps": 96, "hidden": 8}
    if name == "qmix":
        small |= {"replay_rows": 96, "batch_sequences": 4, "learning_starts": 0}
    else:
        small |= {"minibatches": 2}
    game = BridgeGame(variants=(V1_NAVIGATE,), tick_limit=12)
    return validate(dataclasses.replace(config, game=game, **small | changes))


def test_presets_hold_the_papers_settings() -> None:
    chosen = presets(MODE)
    assert list(chosen) == ["maskppo", "mappo", "qmix"]
    mask, mappo, qmix = chosen["maskppo"], chosen["mappo"], chosen["qmix"]
    for ppo, minibatch in ((mask, 512), (mappo, 256)):  # the paper's 1,536 transitions
        assert ppo.num_envs * ppo.rollout == 1536
        assert ppo.num_envs * ppo.rollout // ppo.minibatches == minibatch
        assert (ppo.actor_lr, ppo.critic_lr, ppo.gamma, ppo.gae_lambda) == (3e-4, 3e-4, 0.99, 0.95)
        assert (ppo.clip, ppo.epochs, ppo.recurrent) == (0.2, 4, False)
    assert (mask.joint_ratio, mask.centralised_critic, mask.reward_norm) == (True, False, False)
    assert (mask.entropy_coef, mask.max_grad_norm) == (0.0, 0.5)
    assert (mappo.joint_ratio, mappo.centralised_critic, mappo.reward_norm) == (False, True, True)
    assert (mappo.entropy_coef, mappo.max_grad_norm) == (0.001, 10.0)
    assert qmix.batch_sequences * qmix.rollout == 512  # transitions per gradient step
    assert (qmix.lr, qmix.target_every, qmix.epsilon_steps, qmix.epsilon_finish) == (
        5e-4, 200, 50_000, 0.05,
    )  # fmt: skip
    assert (qmix.reward_norm, qmix.recurrent) == (True, False)
    assert all(c.total_steps == 10_000_000 for c in chosen.values())


def test_variants_are_read_by_name_and_must_share_a_unit_count() -> None:
    config = preset_of(MODE, "mappo")
    assert apply_overrides(config, ["game.variants=2"]).game.names == ("V1_Navigate",)
    mixed = apply_overrides(config, ["game.variants=2,3"])
    with pytest.raises(ConfigError, match="unit counts"):
        validate(mixed)
    with pytest.raises(ConfigError, match=r"game\.variants"):
        validate(apply_overrides(config, ["game.variants=9"]))
    with pytest.raises(ConfigError, match=r"game\.tick_limit"):
        validate(apply_overrides(config, ["game.tick_limit=0"]))


def test_the_env_plays_the_enemies_so_opponents_and_teammates_are_refused() -> None:
    with pytest.raises(ConfigError, match="plays its second team itself"):
        make_train(tiny("mappo"), frozen=(Policy(name="x", act=lambda k, m, i: (None, m)),))
    with pytest.raises(ConfigError, match="plays its second team itself"):
        make_train(tiny("mappo", teammate_slots=(0,)))


@pytest.mark.parametrize("name", ["maskppo", "mappo", "qmix"])
def test_each_preset_trains_and_counts_every_timeout_as_a_loss(name: str) -> None:
    # Games cut at 12 steps, 12 steps per update: every game ends once per update, in a timeout.
    trainer = make_train(tiny(name))
    state = jax.jit(trainer.init)(jax.random.key(0))
    for _ in range(2):  # one update per program, as runs train (the command line's test shares it)
        state, metrics = trainer.run(state, 1)
        assert metrics["games"].tolist() == [4]
        assert metrics["losses"].tolist() == [4]  # a timeout is a loss, not a draw or nothing
        assert metrics["wins"].tolist() == [0]
        assert all(np.isfinite(np.asarray(v)).all() for v in metrics.values())
    # The minimap encoder is part of every network the learner trains.
    assert "'encoder'" in str(jax.tree_util.tree_structure(state.actor))


def test_the_encoder_reads_the_minimap_and_passes_the_rest() -> None:
    width = MINIMAP_SIZE + 23
    x = jax.random.uniform(jax.random.key(0), (3, width))
    encoder = MinimapEncoder()
    params = encoder.init(jax.random.key(1), x)
    out = encoder.apply(params, x)
    assert out.shape == (3, EMBED + 23)
    np.testing.assert_array_equal(out[:, EMBED:], x[:, MINIMAP_SIZE:])
    moved = encoder.apply(params, x.at[:, 5].add(1.0))
    assert not np.allclose(moved[:, :EMBED], out[:, :EMBED])
    unbatched = encoder.apply(params, x[0])  # the mixer's init reads one state
    np.testing.assert_allclose(unbatched, out[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("kernel", "pad", "channels"), [(5, 2, 2), (3, 1, 16), (3, 1, 32)])
def test_patch_conv_is_flaxs_strided_convolution(kernel: int, pad: int, channels: int) -> None:
    """The encoder's convolutions (each layer's shape) equal `flax.linen.Conv` on the same
    parameters, stride 2, zero padding."""
    x = jax.random.normal(jax.random.key(kernel + channels), (3, 32, 32, channels))
    conv = PatchConv(8, kernel, 2, pad)
    params = conv.init(jax.random.key(2), x)
    params = jax.tree.map(lambda p: p + jax.random.uniform(jax.random.key(3), p.shape), params)
    flax_conv = nn.Conv(8, (kernel, kernel), strides=2, padding=pad)
    np.testing.assert_allclose(
        conv.apply(params, x), flax_conv.apply(params, x), rtol=1e-4, atol=1e-4
    )


def test_the_marines_share_one_minimap_so_it_is_encoded_once_per_team() -> None:
    """In random play, every Marine's observation and global state start with one and the same
    minimap (what `MinimapEncoder(agents=True)` relies on); encoding it once per team gives what
    encoding it for every Marine gives."""
    env = marl_bgs.make("two-bridge", variant=["V1_Navigate", "V1_Combat"], num_envs=8)
    key = jax.random.key(3)
    _, state = env.reset(key)
    for tick in range(12):
        faces = (env.observe(state), env.global_state(state))
        for face in faces:
            minimaps = np.asarray(face[..., :MINIMAP_SIZE])
            np.testing.assert_array_equal(
                minimaps, np.broadcast_to(minimaps[:, :1], minimaps.shape)
            )
        k = jax.random.fold_in(key, tick)
        actions = env.sample_actions(k, state)
        _, state, _, _, _ = env.step(k, state, actions)
    x = jnp.concatenate([faces[0], jnp.ones((*faces[0].shape[:-1], 5))], axis=-1)
    encoder = MinimapEncoder()
    params = encoder.init(jax.random.key(1), x)
    once, each = encoder.apply(params, x, agents=True), encoder.apply(params, x)
    np.testing.assert_allclose(once, each, rtol=1e-5, atol=1e-6)


def test_qmix_keeps_the_shared_minimap_once_per_tick_and_every_marines_input_exactly() -> None:
    """QMIX's replay stores the minimap once per team tick (`TrainParts.shared_inputs`), a fifth
    of what storing every Marine's input would hold, and gives every Marine's whole input back."""
    trainer = make_train(tiny("qmix"))
    state = jax.jit(trainer.init)(jax.random.key(4))
    after, traj, _, _ = jax.jit(trainer._rollout)(state, trainer.hyper())
    replay = jax.jit(trainer._store)(state.replay, state, after, traj)
    assert replay.shared.shape[-1] == MINIMAP_SIZE
    assert replay.x.shape[-1] == trainer.input_size - MINIMAP_SIZE
    rollout = trainer.config.rollout
    stored = np.asarray(replay.inputs()[: trainer.config.num_envs, :rollout])
    np.testing.assert_array_equal(stored, np.swapaxes(np.asarray(traj.x), 0, 1))


def test_marine_ids_are_one_hot_per_slot() -> None:
    ids = marine_ids(jnp.zeros((2, 7, 5, 30)), BridgeGame(), ())
    assert ids.shape == (2, 7, 5, 5)
    np.testing.assert_array_equal(ids[1, 3], np.eye(5))


def test_reward_scale_is_the_running_std_of_discounted_returns() -> None:
    rng = np.random.default_rng(0)
    rewards = rng.normal(size=(50, 4, 5)).astype(np.float32)
    scale = RewardScale.create((4, 5))
    returns, seen = np.zeros((4, 5)), []
    for r in rewards:
        scale = scale.update(jnp.asarray(r), jnp.zeros((4, 1), bool), 0.9)
        returns = returns * 0.9 + r
        seen.append(returns.copy())
    want = np.std(np.stack(seen))
    assert float(scale.scale(jnp.float32(1.0))) == pytest.approx(1.0 / want, rel=1e-3)
    ended = scale.update(jnp.ones((4, 5)), jnp.asarray([[True], [False], [False], [False]]), 0.9)
    np.testing.assert_array_equal(ended.returns[0], 0.0)  # a finished game's return restarts


def test_a_joint_ratio_sums_the_agents_log_probabilities() -> None:
    rng = np.random.default_rng(1)
    lp, old, adv, ent = (jnp.asarray(rng.normal(size=(3, 4, 5)), jnp.float32) for _ in range(4))
    weight = jnp.ones((3, 4, 5)).at[0, 0, 2:].set(0.0).at[2, 1].set(0.0)
    joint_lp, joint_old, joint_adv, joint_ent, joint_w = joint(lp, old, adv, ent, weight)
    w = np.asarray(weight)
    np.testing.assert_allclose(joint_lp, (np.asarray(lp) * w).sum(-1), rtol=1e-6)
    np.testing.assert_allclose(joint_old, (np.asarray(old) * w).sum(-1), rtol=1e-6)
    np.testing.assert_allclose(joint_ent, (np.asarray(ent) * w).sum(-1), rtol=1e-6)
    mean = (np.asarray(adv) * w).sum(-1) / np.maximum(w.sum(-1), 1)
    np.testing.assert_allclose(joint_adv, mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(joint_w, (w.sum(-1) > 0).astype(np.float32))
    # One ratio per game: the joint ratio is the product of the agents' ratios, clipped once.
    loss, _ = ppo_actor_loss(joint_lp, joint_old, joint_adv, joint_ent, joint_w, 0.2, 0.0)
    per_agent, _ = ppo_actor_loss(lp, old, adv, ent, weight, 0.2, 0.0)
    assert float(loss) != pytest.approx(float(per_agent))


def test_a_tiny_run_through_the_command_line_scores_and_resumes(tmp_path) -> None:
    run = tmp_path / "mask"
    args = ["maskppo", "--mode", MODE, "--variant", "V1_Navigate", "--steps", "96", "--envs", "4",
            "--rollout", "12", "--out", str(run), "--quiet", "--save-every", "2", "--validate",
            "--validation-games", "4", "--set", "hidden=8", "--set", "minibatches=2",
            "--set", "game.tick_limit=12"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    config = checkpoints.load_config(run)
    assert (config.mode, config.game.names, config.joint_ratio) == (MODE, ("V1_Navigate",), True)
    table = pd.read_csv(run / "validation.csv")
    assert table["update"].tolist() == [2]  # a checkpoint every 2 updates
    shares = table[["navigation_win", "combat_win", "combat_loss", "timeout_loss"]]
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    np.testing.assert_allclose(table["score"], table["navigation_win"] + table["combat_win"])
    assert (table["wins"] + table["losses"] == 4).all()
    assert (run / "best" / "best.json").exists()
    resumed = CliRunner().invoke(app, ["resume", str(run), "--steps", "144", "--quiet"])
    assert resumed.exit_code == 0, resumed.output
    assert pd.read_csv(run / "log.csv")["update"].tolist() == [1, 2, 3]


def test_the_papers_protocol_is_one_command_with_a_table_per_variant(tmp_path, monkeypatch) -> None:
    # Every chosen variant x learner x seed, each checkpoint scored; outcomes.csv holds the mean
    # of the seeds' final checkpoints per (variant, learner). Tiny: one learner, three variants:
    # two of one unit count trained as one program (their seeds in one `train_runs`), then V2's.
    programs = []
    real = batch.train_runs
    monkeypatch.setattr(
        batch,
        "train_runs",
        lambda configs, *a, **k: programs.append(len(configs)) or real(configs, *a, **k),
    )
    args = ["suite", "--mode", MODE, "--learner", "qmix",
            "--variant", "V1_Base,V1_Navigate,V2_Base", "--each-layout", "--validate",
            "--validation-games", "2", "--seeds", "2",
            "--steps", "96", "--envs", "4", "--rollout", "12", "--check-every", "96",
            "--out", str(tmp_path), "--quiet", "--set", "hidden=8", "--set", "replay_rows=96",
            "--set", "batch_sequences=4", "--set", "learning_starts=0",
            "--set", "game.tick_limit=12"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert programs == [4, 2]
    table = pd.read_csv(tmp_path / "outcomes.csv")
    assert table[["layout", "learner", "runs", "update"]].values.tolist() == [
        ["V1_Base", "qmix", 2, 2], ["V1_Navigate", "qmix", 2, 2],  # one checkpoint, the last
        ["V2_Base", "qmix", 2, 2],
    ]  # fmt: skip
    for variant in ("V1_Base", "V1_Navigate", "V2_Base"):
        config = checkpoints.load_config(tmp_path / variant / "qmix" / "s1")
        assert config.game.names == (variant,)
        for s in (0, 1):  # recorded, so `resume` goes on validating alike
            recorded = read_settings(tmp_path / variant / "qmix" / f"s{s}")
            assert recorded == validation_settings(None, 2, MODE)
        finals = [
            pd.read_csv(tmp_path / variant / "qmix" / f"s{s}" / "validation.csv").iloc[-1]
            for s in (0, 1)
        ]
        row = table[table["layout"] == variant].iloc[0]
        assert row["timeout_loss"] == pytest.approx(np.mean([f["timeout_loss"] for f in finals]))
        assert (tmp_path / variant / "suite.png").exists()
