"""Training throughput of the baselines next to the simulator alone, same games and rollout.

    JAX_PLATFORMS=cpu python benchmarks/train_throughput.py                 # 32 games x 32 ticks
    python benchmarks/train_throughput.py --presets ippo-rnn --num-envs 64 --repeats 3
    python benchmarks/train_throughput.py --jaxmarl /path/to/JaxMARL        # with the peer
    python benchmarks/train_throughput.py --mode two-bridge --presets maskppo mappo qmix \
        --num-envs 96 --rollout 16 --full-replay                            # Two-Bridge's presets

Each figure runs in its own fresh process (`--worker`), so compiled programs and caches never leak
between figures: first the simulator alone (random legal actions, `reset_done`, one compiled
`lax.scan` of `rollout` ticks), then each learner (one compiled update: the rollout with both
teams acting, GAE and the PPO epochs). After one call to compile, `--repeats` timed calls; the
median is reported, with the process's peak resident memory. QMIX runs with a replay of 8
rollouts (its default 132,096 rows would hold 2.3 GB of observations) and learns from the
first; `--full-replay` keeps the preset's replay. `--mode` picks the mode (its presets; the
simulator figure plays its default layouts). The ratio learner / simulator is the result (goal
>= 0.5); absolute numbers depend on the machine and its load.

The peer (`--jaxmarl`, a JaxMARL checkout): JaxMARL's own `baselines/IPPO/ippo_rnn_smax.py` with
only its env line changed (`ci/jaxmarl_baselines.py`) to Team Deathmatch on the training maps,
its own settings otherwise except the same games and rollout. Its script has no timing hooks, so
it runs twice, for 2 and for 2 + `--peer-updates` updates, and the difference of the two wall
times is the peer's time for `--peer-updates` updates (compiling cancels out). Needs the
script's imports: `pip install distrax hydra-core omegaconf wandb` and `jaxmarl`.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def build_trainer(mode: str, preset: str, num_envs: int, rollout: int, full_replay: bool) -> Any:
    """The learner of `mode`'s `preset` at `num_envs` games and `rollout` ticks. QMIX keeps a
    replay of 8 rollouts and learns from the first (its preset's 132,096 rows would hold 2.3 GB
    of observations) unless `full_replay`."""
    import dataclasses

    from marl_bgs_train import QMIXConfig, make_train, presets

    config = dataclasses.replace(presets(mode)[preset], num_envs=num_envs, rollout=rollout)
    if isinstance(config, QMIXConfig) and not full_replay:
        config = dataclasses.replace(config, replay_rows=8 * num_envs * rollout, learning_starts=0)
    return make_train(config)


def _worker(
    figure: str, num_envs: int, rollout: int, repeats: int, mode: str, full_replay: bool
) -> dict:
    import jax

    import marl_bgs

    if figure == "simulator":
        layouts = {"map_id": list(range(42))} if mode == "tdm" else {}
        env = marl_bgs.make(mode, num_envs=num_envs, **layouts)

        def tick(carry, _):
            state, key = carry
            key, k_act, k_step, k_reset = jax.random.split(key, 4)
            _, state, _reward, _, _ = env.step(k_step, state, env.sample_actions(k_act, state))
            _, state = env.reset_done(k_reset, state)
            return (state, key), None

        run = jax.jit(lambda s, k: jax.lax.scan(tick, (s, k), None, length=rollout)[0])
        _, state = env.reset(jax.random.key(0))
        call = lambda c: run(*c)  # noqa: E731
        carry = (state, jax.random.key(1))
    else:
        trainer = build_trainer(mode, figure, num_envs, rollout, full_replay)
        carry = jax.jit(trainer.init)(jax.random.key(0))
        call = lambda s: trainer.run(s, 1)[0]  # noqa: E731
    started = time.perf_counter()
    carry = jax.block_until_ready(call(carry))
    compile_s = time.perf_counter() - started
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        carry = jax.block_until_ready(call(carry))
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    return {
        "figure": figure,
        "num_envs": num_envs,
        "rollout": rollout,
        "steps_per_second": num_envs * rollout / median,
        "median_seconds": median,
        "first_call_seconds": compile_s,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_device_mb": _device_peak_mb(jax.devices()[0]),
        "device": str(jax.devices()[0]),
    }


def _device_peak_mb(device: object) -> float | None:
    """The accelerator's peak memory in use (MB), where its runtime reports one (GPUs)."""
    stats = getattr(device, "memory_stats", lambda: None)()
    return stats["peak_bytes_in_use"] / 2**20 if stats and "peak_bytes_in_use" in stats else None


def _peer(jaxmarl: Path, num_envs: int, rollout: int, updates: int) -> dict:
    """JaxMARL's recurrent IPPO on the adapter: seconds for `updates` updates by difference."""
    import os
    import runpy

    tools = runpy.run_path(str(HERE.parent / "ci" / "jaxmarl_baselines.py"))
    ippo = tools["SCRIPTS"][0]  # ippo_rnn_smax.py
    source = jaxmarl / ippo.path
    script = source.with_name("ippo_rnn_marl_bgs.py")
    settings = {"map_id": list(range(42))}
    script.write_text(tools["patched"](source.read_text(), ippo, "tdm", settings, "tdm-alpha"))
    env = {**os.environ, "WANDB_MODE": "disabled", "JAX_PLATFORMS": "cpu"}
    seconds = []
    for n in (2, 2 + updates):
        cmd = [sys.executable, str(script), f"NUM_ENVS={num_envs}", f"NUM_STEPS={rollout}",
               f"TOTAL_TIMESTEPS={num_envs * rollout * n}", "hydra.run.dir=.",
               "hydra.output_subdir=null", "hydra/job_logging=disabled"]  # fmt: skip
        started = time.perf_counter()
        subprocess.run(cmd, cwd=script.parent, env=env, check=True, capture_output=True)
        seconds.append(time.perf_counter() - started)
    per_update = (seconds[1] - seconds[0]) / updates
    return {
        "figure": "jaxmarl ippo_rnn_smax",
        "num_envs": num_envs,
        "rollout": rollout,
        "steps_per_second": num_envs * rollout / per_update,
        "median_seconds": per_update,
        "first_call_seconds": seconds[0] - 2 * per_update,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "device": "cpu",
    }


def _device(row: dict) -> str:
    peak = row.get("peak_device_mb")
    return "" if peak is None else f", device peak {peak:,.0f} MB on {row['device']}"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--presets",
        nargs="+",
        default=["ippo-rnn", "ippo-ff", "mappo-rnn", "mappo-ff", "pqn-vdn", "qmix"],
    )
    p.add_argument("--num-envs", type=int, default=32)
    p.add_argument("--rollout", type=int, default=32)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", type=Path, default=HERE / "results" / "train_throughput.json")
    p.add_argument("--jaxmarl", type=Path, help="a JaxMARL checkout: add the peer's figure")
    p.add_argument("--peer-updates", type=int, default=20)
    p.add_argument("--mode", default="tdm", help="the mode whose presets train")
    p.add_argument("--full-replay", action="store_true", help="QMIX keeps its preset's replay")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker == "jaxmarl":
        row = _peer(args.jaxmarl, args.num_envs, args.rollout, args.peer_updates)
        print(json.dumps(row))
        return
    if args.worker:
        row = _worker(args.worker, args.num_envs, args.rollout, args.repeats, args.mode,
                      args.full_replay)  # fmt: skip
        print(json.dumps(row))
        return
    rows = []
    peer = ["jaxmarl"] if args.jaxmarl else []
    for figure in ["simulator", *args.presets, *peer]:
        cmd = [sys.executable, __file__, "--worker", figure, "--num-envs", str(args.num_envs),
               "--rollout", str(args.rollout), "--repeats", str(args.repeats),
               "--peer-updates", str(args.peer_updates), "--mode", args.mode]  # fmt: skip
        if args.full_replay:
            cmd.append("--full-replay")
        if args.jaxmarl:
            cmd += ["--jaxmarl", str(args.jaxmarl.resolve())]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
        r = rows[-1]
        ratio = r["steps_per_second"] / rows[0]["steps_per_second"]
        print(f"{figure:>10}: {r['steps_per_second']:9,.0f} game steps/s  x{ratio:.2f} of the "
              f"simulator  (first call {r['first_call_seconds']:.0f} s, peak RSS "
              f"{r['peak_rss_mb']:,.0f} MB{_device(r)})", flush=True)  # fmt: skip
    if args.jaxmarl:
        base = rows[-1]["steps_per_second"]
        for r in rows[1:-1]:
            print(f"{r['figure']:>10}: x{r['steps_per_second'] / base:.2f} of JaxMARL's "
                  "ippo_rnn_smax on the adapter (goal >= 1.5)")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
