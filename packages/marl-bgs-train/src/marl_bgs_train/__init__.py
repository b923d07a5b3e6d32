"""Deep MARL baselines for MARL-BattleGrounds: self-play, opponent pools, shaping, resumable runs.

    from marl_bgs_train import PRESETS, make_train
    train = make_train(PRESETS["ippo-rnn"])
    state, metrics = train(jax.random.key(0))   # the whole run: one compiled function

See docs/training.md. Today: the four PPO baselines (recurrent and feedforward IPPO and MAPPO)
and recurrent PQN-VDN and QMIX, on any mode with training parts (`marl_bgs_train.modes`: Team
Deathmatch's are `marl_bgs_train.tdm`; `PRESETS` are its presets).
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from marl_bgs_eval.lazy import export_lazily
from marl_bgs_eval.moved import install as _install

if TYPE_CHECKING:  # the exports, each imported on first use (marl_bgs_eval.lazy)
    from marl_bgs_train.config import (
        PRESETS,
        OpponentMix,
        PPOConfig,
        PQNConfig,
        QMIXConfig,
        ValidationSettings,
        apply_overrides,
        presets,
    )
    from marl_bgs_train.learners import make_train
    from marl_bgs_train.modes import TrainParts
    from marl_bgs_train.policy import ActorSpec, network_policy
    from marl_bgs_train.ppo import PPOTrainer, RunnerState
    from marl_bgs_train.pqn import PQNState, PQNTrainer
    from marl_bgs_train.qmix import QMIXState, QMIXTrainer
    from marl_bgs_train.runs import load_trainer, run_policy, train_run
    from marl_bgs_train.tdm.game import (
        LayoutVariation,
        RewardSettings,
        Stage,
        TDMGame,
        check_training_maps,
    )
    from marl_bgs_train.tdm.rewards import (
        CombatRewardWeights,
        approach_potential,
        combat_reward,
        health_potential,
        potential_shaping,
        reward_terms,
        score_shaping,
        shaped,
    )

__version__ = _version("marl-bgs-train")
__all__ = [
    "PRESETS",
    "ActorSpec",
    "CombatRewardWeights",
    "LayoutVariation",
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
    "Stage",
    "TDMGame",
    "TrainParts",
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
    "presets",
    "reward_terms",
    "run_policy",
    "score_shaping",
    "shaped",
    "train_run",
]

export_lazily(__name__)
# Old paths of moved modules (old -> new): they still import, with a DeprecationWarning.
MOVED = {
    "marl_bgs_train.rewards": "marl_bgs_train.tdm.rewards",
    "marl_bgs_train.curriculum": "marl_bgs_train.tdm.curriculum",
    "marl_bgs_train.features": "marl_bgs_train.tdm.features",
}
_install(MOVED)
