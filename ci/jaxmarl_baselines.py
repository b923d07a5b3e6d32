"""Run JaxMARL's own SMAX baselines on a MARL-BattleGrounds mode, changing only the env line.

    python ci/jaxmarl_baselines.py /path/to/JaxMARL [--mode tdm] [--settings '{"map_id": 0}']

For each of `baselines/IPPO/ippo_rnn_smax.py` and `baselines/MAPPO/mappo_rnn_smax.py` in a JaxMARL
checkout, writes a copy beside it (hydra finds its config relative to the script) whose only change
is the line that builds the env, then runs it for two updates on a tiny budget with wandb off and
prints the metrics it logs. Exits non-zero when a script fails. Needs the script's own imports
(`pip install distrax hydra-core omegaconf wandb`) and `marl-bgs-engine[jaxmarl]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPTS = ("baselines/IPPO/ippo_rnn_smax.py", "baselines/MAPPO/mappo_rnn_smax.py")
ENV_LINE = 'env = HeuristicEnemySMAX(scenario=scenario, **config["ENV_KWARGS"])'
TINY = [
    "TOTAL_TIMESTEPS=32", "NUM_ENVS=2", "NUM_STEPS=8", "NUM_MINIBATCHES=2", "UPDATE_EPOCHS=1",
    "hydra.run.dir=.", "hydra.output_subdir=null", "hydra/job_logging=disabled",
]  # fmt: skip


def patched(source: str, mode: str, settings: dict) -> str:
    """The script with only its env construction line replaced (and its metrics printed)."""
    if source.count(ENV_LINE) != 1:
        raise SystemExit(f"expected the env line exactly once: {ENV_LINE!r}")
    ours = (
        "from marl_bgs.adapters.jaxmarl import JaxMARLEnv; "
        f"env = JaxMARLEnv({mode!r}, **{settings!r})"
    )
    return source.replace(ENV_LINE, ours).replace("wandb.log(", "print(")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("jaxmarl", type=Path, help="a JaxMARL checkout (its baselines/ folder)")
    p.add_argument("--mode", default="tdm")
    p.add_argument("--settings", default='{"map_id": 0, "tick_limit": 5}', help="JSON keywords")
    args = p.parse_args(argv)
    settings = json.loads(args.settings)
    failed = []
    for rel in SCRIPTS:
        original = args.jaxmarl / rel
        copy = original.with_name(original.stem.replace("smax", "marl_bgs") + ".py")
        copy.write_text(patched(original.read_text(), args.mode, settings))
        env = {**os.environ, "WANDB_MODE": "disabled", "JAX_PLATFORMS": "cpu"}
        print(f"--- {copy}", flush=True)
        run = subprocess.run(
            [sys.executable, str(copy), *TINY], cwd=copy.parent, env=env, check=False
        )
        if run.returncode:
            failed.append(rel)
    print("failed: " + ", ".join(failed) if failed else "both baselines ran", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
