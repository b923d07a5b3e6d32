"""`make_train`: a baseline's trainer from its config (PPO for `PPOConfig`, PQN-VDN for
`PQNConfig`, QMIX for `QMIXConfig`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from jax.sharding import Mesh

from marl_bgs import Policy
from marl_bgs_train.config import PPOConfig, PQNConfig, QMIXConfig
from marl_bgs_train.ppo import PPOTrainer
from marl_bgs_train.pqn import PQNTrainer
from marl_bgs_train.qmix import QMIXTrainer

Trainer = PPOTrainer | PQNTrainer | QMIXTrainer


@overload
def make_train(
    config: PPOConfig,
    frozen: Sequence[Policy] = (),
    teammate: Policy | None = None,
    mesh: Mesh | None = None,
) -> PPOTrainer: ...
@overload
def make_train(
    config: PQNConfig,
    frozen: Sequence[Policy] = (),
    teammate: Policy | None = None,
    mesh: Mesh | None = None,
) -> PQNTrainer: ...
@overload
def make_train(
    config: QMIXConfig,
    frozen: Sequence[Policy] = (),
    teammate: Policy | None = None,
    mesh: Mesh | None = None,
) -> QMIXTrainer: ...
def make_train(
    config: PPOConfig | PQNConfig | QMIXConfig,
    frozen: Sequence[Policy] = (),
    teammate: Policy | None = None,
    mesh: Mesh | None = None,
) -> Trainer:
    """`train = make_train(config); state, metrics = train(key)`: one baseline, the whole run one
    compiled function. `frozen` holds fixed team policies for the opponent pool (any
    `marl_bgs.Policy`); `teammate` plays team A's `config.teammate_slots` (a frozen
    teammate, any `marl_bgs.Policy`: the learner acts and learns for the other slots). With a
    `mesh` (`jax.make_mesh((n,), ("games",))`), the games are split over its first axis's
    devices and the parameters replicated: the same learning, on more devices."""
    if isinstance(config, PQNConfig):
        return PQNTrainer(config, frozen, teammate, mesh)
    if isinstance(config, QMIXConfig):
        return QMIXTrainer(config, frozen, teammate, mesh)
    return PPOTrainer(config, frozen, teammate, mesh)
