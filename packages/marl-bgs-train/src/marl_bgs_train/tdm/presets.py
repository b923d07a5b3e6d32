"""Team Deathmatch's six baselines with the paper's settings (Tables S9-S10, Section S6)."""

from __future__ import annotations

from dataclasses import replace

from marl_bgs_train.config import Config, OpponentMix, PPOConfig, PQNConfig, QMIXConfig
from marl_bgs_train.tdm.game import RewardSettings, TDMGame

SCRIPTED_TEAMS = ("tdm-alpha", "tdm-beta")  # the training mix's scripted opponents (S6.2)


def presets() -> dict[str, Config]:
    """The six baselines by name: recurrent and feedforward IPPO and MAPPO (factored heads),
    recurrent PQN-VDN and QMIX (the flat action)."""
    mix = OpponentMix(scripted_teams=SCRIPTED_TEAMS)
    ippo = PPOConfig(mode="tdm", heads="factored", opponents=mix)
    return {
        "ippo-rnn": ippo,
        "ippo-ff": replace(ippo, name="ippo-ff", recurrent=False),
        "mappo-rnn": replace(ippo, name="mappo-rnn", centralised_critic=True),
        "mappo-ff": replace(
            ippo,
            name="mappo-ff",
            recurrent=False,
            centralised_critic=True,
            actor_lr=3e-4,
            game=TDMGame(reward=RewardSettings(form="team")),
        ),
        "pqn-vdn": PQNConfig(mode="tdm", opponents=mix),
        "qmix": QMIXConfig(mode="tdm", opponents=mix),
    }
