"""Two-Bridge's three baselines with the paper's settings (its Table 2), as presets of the
generic learners. Where the paper's SC2 setup does not carry over, the nearest setting is taken
and named here:

- 96 games step together, 16 steps each per update: the paper's 1,536 transitions per PPO
  update (512 x 3 SC2 workers), in minibatches of 512 (MaskPPO) and 256 (MAPPO) as its own;
- networks are the learners' trunk (two hidden layers and one after them, ReLU) behind the
  paper's minimap encoder, with a one-hot Marine id on every input: MaskPPO's [64, 64] tanh
  controller becomes a 64-wide shared network whose five Marines' log-probabilities add up to one
  joint ratio (`joint_ratio`);
- QMIX replays whole 8-step sequences (the paper: 5,000 episodes), 64 of them (512 transitions)
  per gradient step, one step per 8 steps of every game, the target copied every 200 updates.
"""

from __future__ import annotations

from dataclasses import replace

from marl_bgs_train.config import Config, PPOConfig, QMIXConfig

STEPS = 10_000_000  # the paper's budget in environment steps
MODE = "two-bridge"


def presets() -> dict[str, Config]:
    """MaskPPO, MAPPO and QMIX by name."""
    ppo = PPOConfig(
        mode=MODE, recurrent=False, num_envs=96, rollout=16, total_steps=STEPS, gamma=0.99,
        input_scale=1.0, gae_lambda=0.95, clip=0.2, epochs=4, value_norm=False,
        actor_lr=3e-4, critic_lr=3e-4,
    )  # fmt: skip
    return {
        "maskppo": replace(
            ppo,
            name="maskppo",
            hidden=64,
            joint_ratio=True,
            entropy_coef=0.0,
            max_grad_norm=0.5,
            minibatches=3,
        ),
        "mappo": replace(
            ppo,
            name="mappo",
            hidden=128,
            centralised_critic=True,
            entropy_coef=0.001,
            max_grad_norm=10.0,
            minibatches=6,
            reward_norm=True,
        ),
        "qmix": QMIXConfig(
            mode=MODE,
            name="qmix",
            recurrent=False,
            num_envs=64,
            rollout=8,
            total_steps=STEPS,
            gamma=0.99,
            input_scale=1.0,
            hidden=64,
            max_grad_norm=10.0,
            lr=5e-4,
            epsilon_start=1.0,
            epsilon_finish=0.05,
            epsilon_steps=50_000,
            replay_rows=100_000,
            batch_sequences=64,
            gradient_steps=1,
            learning_starts=19_200,
            target_every=200,
            reward_norm=True,
        ),
    }
