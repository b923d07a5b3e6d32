"""Deep MARL baselines for MARL-BattleGrounds: self-play, opponent pools, shaping, resumable runs.

    from marl_bgs_train import PRESETS, make_train
    train = make_train(PRESETS["ippo-rnn"])
    state, metrics = train(jax.random.key(0))   # the whole run: one compiled function

See docs/training.md. Today: the four PPO baselines (recurrent and feedforward IPPO and MAPPO)
and recurrent PQN-VDN and QMIX.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from marl_bgs_eval.lazy import export_lazily

if TYPE_CHECKING:  # the exports, each imported on first use (marl_bgs_eval.lazy)
    from marl_bgs_train.config import (
        PRESETS,
        OpponentMix,
        PPOConfig,
        PQNConfig,
        QMIXConfig,
        RewardSettings,
        ValidationSettings,
        apply_overrides,
        check_training_maps,
    )
    from marl_bgs_train.learners import make_train
    from marl_bgs_train.policy import ActorSpec, network_policy
    from marl_bgs_train.ppo import PPOTrainer, RunnerState
    from marl_bgs_train.pqn import PQNState, PQNTrainer
    from marl_bgs_train.qmix import QMIXState, QMIXTrainer
    from marl_bgs_train.rewards import (
        CombatRewardWeights,
        approach_potential,
        combat_reward,
        health_potential,
        potential_shaping,
        reward_terms,
        score_shaping,
        shaped,
    )
    from marl_bgs_train.runs import load_trainer, run_policy, train_run

__version__ = _version("marl-bgs-train")
__all__ = [
    "PRESETS",
    "ActorSpec",
    "CombatRewardWeights",
    "OpponentMix",
    "PPOConfig",
    "PPOTrainer",
    "PQNConfig",
    "PQNState",
    "PQNTrainer",
    "QMIXConfig",
    "QMIXState",
    "QMIXTrainer",
    "RewardSettings",
    "RunnerState",
    "ValidationSettings",
    "__version__",
    "apply_overrides",
    "approach_potential",
    "check_training_maps",
    "combat_reward",
    "health_potential",
    "load_trainer",
    "make_train",
    "network_policy",
    "potential_shaping",
    "reward_terms",
    "run_policy",
    "score_shaping",
    "shaped",
    "train_run",
]

export_lazily(__name__)
