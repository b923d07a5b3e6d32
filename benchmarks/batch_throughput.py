"""Many runs in one program against the same runs one after another (issue 44's goal: 8 seeds of
16 games each in at least 3x less wall time on the 2-core CPU).

    JAX_PLATFORMS=cpu python benchmarks/batch_throughput.py                 # ippo-rnn, 8 x 16
    python benchmarks/batch_throughput.py --preset mappo-ff --seeds 4 --updates 3

Both figures run the same configs from the same seeds, each in its own fresh process (no
compiled program or cache shared between them), and count the wall time a researcher waits:
compiling included. `one after another`: `make_train(config)(key)` per seed (the first compiles,
the others reuse its program). `one program`: `init_many` and `run_many` over all seeds (one
compile). The whole time and the time after the first update (compiling excluded) are reported,
with the ratio sequential / batched.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _worker(kind: str, preset: str, seeds: int, num_envs: int, rollout: int, updates: int) -> dict:
    import dataclasses

    import jax
    import jax.numpy as jnp

    from marl_bgs_train import PRESETS, make_train

    config = dataclasses.replace(
        PRESETS[preset], num_envs=num_envs, rollout=rollout,
        total_steps=num_envs * rollout * updates,
    )  # fmt: skip
    trainer = make_train(config)
    keys = [jax.random.key(s) for s in range(seeds)]
    hypers = jax.tree.map(lambda v: jnp.stack([v] * seeds), trainer.hyper())
    started = time.perf_counter()
    if kind == "sequential":
        first = None
        for key in keys:
            state = jax.block_until_ready(trainer.run(jax.jit(trainer.init)(key), 1)[0])
            first = first or time.perf_counter()
            jax.block_until_ready(trainer.run(state, updates - 1))
    else:
        states = trainer.run_many(trainer.init_many(jnp.stack(keys), hypers), 1, hypers)[0]
        states = jax.block_until_ready(states)
        first = time.perf_counter()
        jax.block_until_ready(trainer.run_many(states, updates - 1, hypers))
    done = time.perf_counter()
    return {"kind": kind, "preset": preset, "seeds": seeds, "num_envs": num_envs,
            "rollout": rollout, "updates": updates, "seconds": done - started,
            "after_first_update": done - first, "device": str(jax.devices()[0])}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--preset", default="ippo-rnn")
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--rollout", type=int, default=32)
    p.add_argument("--updates", type=int, default=4)
    p.add_argument("--out", type=Path, default=HERE / "results" / "batch_throughput.json")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    sizes = (args.preset, args.seeds, args.num_envs, args.rollout, args.updates)
    if args.worker:
        print(json.dumps(_worker(args.worker, *sizes)))
        return
    rows = []
    for kind in ("sequential", "batched"):
        cmd = [sys.executable, __file__, "--worker", kind, "--preset", args.preset,
               "--seeds", str(args.seeds), "--num-envs", str(args.num_envs),
               "--rollout", str(args.rollout), "--updates", str(args.updates)]  # fmt: skip
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
        r = rows[-1]
        print(f"{kind:>10}: {r['seconds']:7.1f} s in all, {r['after_first_update']:7.1f} s after "
              f"the first update ({args.seeds} runs of {args.num_envs} games, {args.updates} "
              f"updates of {args.rollout} ticks, {args.preset})", flush=True)  # fmt: skip
    seq, bat = rows
    print(f"one program: x{seq['seconds'] / bat['seconds']:.2f} less wall time in all, "
          f"x{seq['after_first_update'] / bat['after_first_update']:.2f} after compiling "
          "(goal >= 3 in all)")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
