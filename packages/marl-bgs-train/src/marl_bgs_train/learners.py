"""`make_train`: a baseline's trainer from its config (PPO for `PPOConfig`, PQN-VDN for
`PQNConfig`, QMIX for `QMIXConfig`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from marl_bgs import Policy
from marl_bgs_train.config import PPOConfig, PQNConfig, QMIXConfig
from marl_bgs_train.ppo import PPOTrainer
from marl_bgs_train.pqn import PQNTrainer
from marl_bgs_train.qmix import QMIXTrainer

Trainer = PPOTrainer | PQNTrainer | QMIXTrainer


@overload
def make_train(config: PPOConfig, frozen: Sequence[Policy] = ()) -> PPOTrainer: ...
@overload
def make_train(config: PQNConfig, frozen: Sequence[Policy] = ()) -> PQNTrainer: ...
@overload
def make_train(config: QMIXConfig, frozen: Sequence[Policy] = ()) -> QMIXTrainer: ...
def make_train(
    config: PPOConfig | PQNConfig | QMIXConfig, frozen: Sequence[Policy] = ()
) -> Trainer:
    """`train = make_train(config); state, metrics = train(key)`: one baseline, the whole run one
    compiled function. `frozen` holds fixed team policies for the opponent pool (any
    `marl_bgs.Policy`)."""
    if isinstance(config, PQNConfig):
        return PQNTrainer(config, frozen)
    if isinstance(config, QMIXConfig):
        return QMIXTrainer(config, frozen)
    return PPOTrainer(config, frozen)
