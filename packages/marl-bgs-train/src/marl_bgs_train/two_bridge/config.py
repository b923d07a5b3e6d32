"""Settings of the Two-Bridge baselines, with the paper's hyperparameters (its Table 2) as the
defaults of each algorithm. Where the paper's SC2 setup does not carry over (3 workers, an
episode replay of 5,000 x 600 steps), the difference is named on the field."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from marl_bgs import ConfigError
from marl_bgs.core.checks import check_bool, check_float, check_int, shown
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
    resume_every: int = 20  # checkpoints between saves of the whole state (to resume from)
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


ADDED_SETTINGS = ("resume_every",)  # added after runs were saved: those load with the default

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


def _algo(algo: Any) -> str:
    if not isinstance(algo, str) or algo not in ALGOS:
        raise ConfigError(f"algo: expected one of {list(ALGOS)}, got {shown(algo)}")
    return str(algo)


def paper_defaults(algo: str = "mappo", **overrides: Any) -> BridgeConfig:
    """As `paper_config`, not yet validated (for further overrides, then `validate`)."""
    algo = _algo(algo)
    fields = [f.name for f in dataclasses.fields(BridgeConfig)]
    unknown = sorted(set(overrides) - set(fields), key=str)
    if unknown:
        raise ConfigError(f"{shown(unknown[0], 40)}: not a setting; allowed {', '.join(fields)}")
    return BridgeConfig(algo=algo, **{**PAPER[algo], **overrides})


# Allowed ranges: integers (low, high) and numbers (low, high), inclusive.
INTEGERS = {
    "seed": (0, 2**31 - 1), "total_steps": (1, 10**12), "num_envs": (1, 2**20),
    "checkpoint_every": (1, 10**12), "eval_episodes": (1, 4096),
    "resume_every": (1, 10**9), "rollout": (1, 100_000),
    "epochs": (1, 1000), "minibatch": (1, 10**7), "buffer_size": (2, 10**8),
    "batch_size": (1, 10**6), "learning_starts": (0, 10**12), "train_every": (1, 100_000),
    "target_update": (1, 10**9), "epsilon_steps": (1, 10**12),
}  # fmt: skip
NUMBERS = {
    "lr": (1e-9, 1.0), "gamma": (0.0, 1.0), "max_grad_norm": (1e-6, 1e6),
    "gae_lambda": (0.0, 1.0), "clip": (1e-6, 10.0), "entropy_coef": (0.0, 10.0),
    "value_coef": (0.0, 100.0), "epsilon_start": (0.0, 1.0), "epsilon_end": (0.0, 1.0),
}  # fmt: skip


def validate(config: BridgeConfig) -> BridgeConfig:
    """The config with every field checked and stored as a plain Python value; a bad one raises
    `ConfigError` naming the field and what is allowed."""
    algo = _algo(config.algo)
    if not isinstance(config.variant, str) or config.variant not in VARIANTS:
        raise ConfigError(f"variant: expected one of {list(VARIANTS)}, got {shown(config.variant)}")
    values: dict[str, Any] = {"algo": algo, "variant": str(config.variant)}
    for name, (lo, hi) in INTEGERS.items():
        values[name] = check_int(getattr(config, name), name, lo, hi)
    for name, (lo, hi) in NUMBERS.items():
        values[name] = check_float(getattr(config, name), name, lo, hi)
    values["reward_standardization"] = check_bool(
        config.reward_standardization, "reward_standardization"
    )
    checked = dataclasses.replace(config, **values)
    if algo != "qmix" and (checked.num_envs * checked.rollout) % checked.minibatch:
        raise ConfigError(
            f"minibatch: must divide num_envs x rollout = {checked.num_envs * checked.rollout}"
        )
    return checked
