"""Settings of the Two-Bridge baselines, with the paper's hyperparameters (its Table 2) as the
defaults of each algorithm. Where the paper's SC2 setup does not carry over (3 workers, an
episode replay of 5,000 x 600 steps), the difference is named on the field."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from marl_bgs import ConfigError
from marl_bgs.two_bridge import VARIANTS
from marl_bgs.two_bridge.layout import ENEMY_COUNTS

ALGOS = ("maskppo", "mappo", "qmix")


@dataclass(frozen=True)
class BridgeConfig:
    """One Two-Bridge training run (build it with `paper_config`)."""

    algo: str = "mappo"
    variant: str = "V2_Base"
    seed: int = 0
    total_steps: int = 10_000_000  # environment steps (one game advancing one step)
    num_envs: int = 64  # games stepped together (the paper: 3 SC2 workers)
    checkpoint_every: int = 50_000  # environment steps between checkpoints
    eval_episodes: int = 32  # deterministic evaluation episodes per checkpoint
    lr: float = 3e-4
    gamma: float = 0.99
    max_grad_norm: float = 10.0
    reward_standardization: bool = True
    # PPO (maskppo, mappo)
    rollout: int = 24  # steps per game per update: 64 x 24 = 1,536 transitions, the paper's
    epochs: int = 4
    minibatch: int = 256  # transitions per minibatch
    gae_lambda: float = 0.95
    clip: float = 0.2
    entropy_coef: float = 0.001
    value_coef: float = 0.5
    # QMIX
    buffer_size: int = 100_000  # transitions (the paper: 5,000 episodes, too big to hold here)
    batch_size: int = 512  # transitions per update (the paper: 16 episodes)
    learning_starts: int = 19_200  # transitions before learning (the paper: 32 episodes)
    train_every: int = 8  # environment steps of all games between updates
    target_update: int = 200  # updates between target-network copies
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_steps: int = 50_000  # environment steps of the linear decay

    @property
    def num_enemies(self) -> int:
        return ENEMY_COUNTS[self.variant.split("_")[0]]


PAPER = {
    "maskppo": {"lr": 3e-4, "entropy_coef": 0.0, "max_grad_norm": 0.5, "minibatch": 512,
                "reward_standardization": False},
    "mappo": {"lr": 3e-4, "entropy_coef": 0.001, "max_grad_norm": 10.0, "minibatch": 256,
              "reward_standardization": True},
    "qmix": {"lr": 5e-4, "max_grad_norm": 10.0, "reward_standardization": True},
}  # fmt: skip


def paper_config(algo: str = "mappo", **overrides: Any) -> BridgeConfig:
    """The paper's settings for `algo` ("maskppo", "mappo" or "qmix"), with `overrides`,
    validated."""
    return validate(paper_defaults(algo, **overrides))


def paper_defaults(algo: str = "mappo", **overrides: Any) -> BridgeConfig:
    """As `paper_config`, not yet validated (for further overrides, then `validate`)."""
    if algo not in ALGOS:
        raise ConfigError(f"algo: expected one of {list(ALGOS)}, got {algo!r}")
    fields = {f.name for f in dataclasses.fields(BridgeConfig)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ConfigError(f"{unknown[0]}: not a setting; allowed {sorted(fields)}")
    return BridgeConfig(algo=algo, **{**PAPER[algo], **overrides})


def validate(config: BridgeConfig) -> BridgeConfig:
    """Refuse settings that cannot run, naming the field."""
    if config.algo not in ALGOS:
        raise ConfigError(f"algo: expected one of {list(ALGOS)}, got {config.algo!r}")
    if config.variant not in VARIANTS:
        raise ConfigError(f"variant: expected one of {list(VARIANTS)}, got {config.variant!r}")
    positive = ("total_steps", "num_envs", "checkpoint_every", "eval_episodes", "rollout",
                "epochs", "minibatch", "buffer_size", "batch_size", "train_every",
                "target_update", "epsilon_steps")  # fmt: skip
    for name in positive:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name}: expected a positive integer, got {value!r}")
    if config.algo != "qmix" and (config.num_envs * config.rollout) % config.minibatch:
        raise ConfigError(
            f"minibatch: must divide num_envs x rollout = {config.num_envs * config.rollout}"
        )
    for name in ("lr", "max_grad_norm", "clip"):
        if not getattr(config, name) > 0:
            raise ConfigError(f"{name}: expected a positive number, got {getattr(config, name)!r}")
    for name in ("gamma", "gae_lambda", "epsilon_start", "epsilon_end"):
        if not 0 <= getattr(config, name) <= 1:
            raise ConfigError(f"{name}: expected a number in [0, 1], got {getattr(config, name)!r}")
    return config
