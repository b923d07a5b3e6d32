"""Run JaxMARL's own SMAX baselines on a MARL-BattleGrounds mode, changing only the env line.

    python ci/jaxmarl_baselines.py /path/to/JaxMARL [--mode tdm] [--settings '{"map_id": 0}']

For each script below in a JaxMARL checkout, writes a copy beside it (hydra finds its config
relative to the script) whose only change is the line that builds the env, then runs it on a tiny
budget with wandb off and prints the metrics it logs. Exits non-zero when a script fails.

- `baselines/IPPO/ippo_rnn_smax.py`, `baselines/MAPPO/mappo_rnn_smax.py`: both teams learn with
  shared parameters (`JaxMARLEnv`).
- `baselines/QLearning/qmix_rnn.py` and `vdn_rnn.py` (`+alg=ql_rnn_smax`): team A learns against
  a scripted team folded into the env (`JaxMARLTeamEnv`, `--opponent`), read by JaxMARL's
  `CTRolloutManager` as it reads SMAX (world_state, exact masks, the team's reward).

Needs the scripts' own imports (`pip install distrax flashbax hydra-core omegaconf wandb`) and
`marl-bgs-engine[jaxmarl]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

HYDRA = ["hydra.run.dir=.", "hydra.output_subdir=null", "hydra/job_logging=disabled"]
PPO_LINE = 'env = HeuristicEnemySMAX(scenario=scenario, **config["ENV_KWARGS"])'
PPO_TINY = [
    "TOTAL_TIMESTEPS=32", "NUM_ENVS=2", "NUM_STEPS=8", "NUM_MINIBATCHES=2", "UPDATE_EPOCHS=1",
]  # fmt: skip
Q_LINE = "env, env_name = env_from_config(copy.deepcopy(config))"
Q_TINY = [
    "+alg=ql_rnn_smax", "alg.TOTAL_TIMESTEPS=64", "alg.NUM_ENVS=2", "alg.NUM_STEPS=8",
    "alg.BUFFER_SIZE=16", "alg.BUFFER_BATCH_SIZE=2", "alg.LEARNING_STARTS=16",
    "alg.HIDDEN_SIZE=32", "alg.MIXER_EMBEDDING_DIM=8", "alg.MIXER_HYPERNET_HIDDEN_DIM=16",
    "alg.NUM_EPOCHS=1", "alg.TEST_NUM_ENVS=2", "alg.TEST_NUM_STEPS=8", "alg.TEST_INTERVAL=0.5",
    "SAVE_PATH=null", "WANDB_MODE=offline",  # offline: the metrics callback runs (printed)
]  # fmt: skip


class Script(NamedTuple):
    """A JaxMARL baseline: where it is, its env line, what replaces it, its tiny budget."""

    path: str
    env_line: str
    ours: str  # a format string of mode, settings and opponent
    tiny: list[str]


PPO_ENV = (
    "from marl_bgs.adapters.jaxmarl import JaxMARLEnv; env = JaxMARLEnv({mode!r}, **{settings!r})"
)
Q_ENV = (
    "from marl_bgs import scripted_policy; from marl_bgs.adapters.jaxmarl import JaxMARLTeamEnv; "
    "env = LogWrapper(JaxMARLTeamEnv({mode!r}, opponent=scripted_policy({opponent!r}), "
    "**{settings!r})); env_name = env.name"
)
SCRIPTS = (
    Script("baselines/IPPO/ippo_rnn_smax.py", PPO_LINE, PPO_ENV, PPO_TINY),
    Script("baselines/MAPPO/mappo_rnn_smax.py", PPO_LINE, PPO_ENV, PPO_TINY),
    Script("baselines/QLearning/qmix_rnn.py", Q_LINE, Q_ENV, Q_TINY),
    Script("baselines/QLearning/vdn_rnn.py", Q_LINE, Q_ENV, Q_TINY),
)


def patched(source: str, script: Script, mode: str, settings: dict, opponent: str) -> str:
    """The script with only its env construction line replaced (and its metrics printed)."""
    if source.count(script.env_line) != 1:
        raise SystemExit(f"expected the env line exactly once: {script.env_line!r}")
    ours = script.ours.format(mode=mode, settings=settings, opponent=opponent)
    return source.replace(script.env_line, ours).replace("wandb.log(", "print(")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("jaxmarl", type=Path, help="a JaxMARL checkout (its baselines/ folder)")
    p.add_argument("--mode", default="tdm")
    p.add_argument("--settings", default='{"map_id": 0, "tick_limit": 5}', help="JSON keywords")
    p.add_argument("--opponent", default="tdm-alpha", help="team B of the Q-learning scripts")
    args = p.parse_args(argv)
    settings = json.loads(args.settings)
    failed = []
    for script in SCRIPTS:
        original = args.jaxmarl / script.path
        stem = original.stem.replace("smax", "marl_bgs")
        copy = original.with_name(stem + ("" if stem != original.stem else "_marl_bgs") + ".py")
        copy.write_text(patched(original.read_text(), script, args.mode, settings, args.opponent))
        env = {**os.environ, "WANDB_MODE": "disabled", "JAX_PLATFORMS": "cpu"}
        print(f"--- {copy}", flush=True)
        run = subprocess.run(
            [sys.executable, str(copy), *script.tiny, *HYDRA], cwd=copy.parent, env=env,
            check=False,
        )  # fmt: skip
        if run.returncode:
            failed.append(script.path)
    print("failed: " + ", ".join(failed) if failed else "every baseline ran", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
