"""Training split over a device mesh learns as on one device.

The sharded runs go in a fresh process with 8 simulated CPU devices
(`--xla_force_host_platform_device_count`); the errors are checked here with a mesh of one
device repeated (nothing is compiled).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import jax
import pytest

from marl_bgs import ConfigError
from marl_bgs.testing import run_on_host_devices
from marl_bgs_train import make_train
from marl_bgs_train.devices import join_job, runs_layout, training_mesh
from marl_bgs_train.runs import train_runs
from marl_bgs_train.testing import tiny_config

# Each learner family: 3 updates through `train_run` on one device and on 8 (saving every
# update); then (QMIX, PQN-VDN) the sharded run's second checkpoint resumed on the mesh for its
# third update.
# The games played are the same games (identical positions after every update: every random
# draw is the same on any layout), the parameters equal up to the order of the cross-device
# sums of the gradients (float32 rounding, well under 1e-5), the logged rows likewise.
SCRIPT = textwrap.dedent(
    """
    import dataclasses, shutil, sys, tempfile
    from pathlib import Path
    import jax, numpy as np
    from marl_bgs_train.devices import training_mesh
    from marl_bgs_train.runs import read_log, train_run, train_runs
    from marl_bgs_train.testing import assert_trees_equal, tiny_config

    assert jax.device_count() == 8
    mesh = training_mesh(8)
    sizes = {
        "ippo-rnn": dict(num_envs=16, minibatches=2, total_steps=16 * 4 * 3),
        "ippo-ff": dict(num_envs=16, minibatches=2, total_steps=16 * 4 * 3),
        "pqn-vdn": dict(num_envs=16, minibatches=2, total_steps=16 * 4 * 3),
        "qmix": dict(num_envs=8, replay_rows=64, batch_sequences=8, total_steps=8 * 4 * 3),
    }
    # Resuming on the mesh places a checkpoint's state with the trainer's shardings: a learner
    # with a replay (its rows split over the devices) and one without.
    RESUMED = ("qmix", "pqn-vdn")
    root = Path(tempfile.mkdtemp())
    for preset in sys.argv[1:]:
        cfg = tiny_config(preset, **sizes[preset])
        one = train_run(cfg, root / preset / "one", seed=3, progress=False, save_every=1)
        split = train_run(cfg, root / preset / "split", seed=3, progress=False, save_every=1,
                          mesh=mesh)
        assert jax.tree.leaves(split.actor)[0].sharding.is_fully_replicated
        carry = split.actor_carry if hasattr(split, "actor_carry") else split.carry
        assert carry.sharding.spec == jax.sharding.PartitionSpec("games")
        np.testing.assert_array_equal(one.env_state.units.pos, split.env_state.units.pos)
        for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(split), strict=True):
            if jax.dtypes.issubdtype(a.dtype, np.floating):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
            else:
                np.testing.assert_array_equal(a, b)
        logs = (read_log(root / preset / run) for run in ("one", "split"))
        for x, y in zip(*logs, strict=True):
            assert x.keys() == y.keys()
            for k in x:
                if k != "steps_per_second":
                    np.testing.assert_allclose(x[k], y[k], rtol=1e-4, atol=1e-5, err_msg=k)
        if preset in RESUMED:
            again = root / preset / "again"
            shutil.copytree(root / preset / "split", again)
            shutil.rmtree(again / "checkpoints" / "3")
            resumed = train_run(cfg, again, seed=3, resume=True, progress=False, mesh=mesh)
            assert_trees_equal(resumed, split)
        if preset == "ippo-rnn":  # a batch of 4 runs, each of 4 devices training one whole run
            dirs = [root / preset / f"run{i}" for i in range(4)]
            batch = train_runs([cfg] * 4, [3, 4, 5, 6], dirs, progress=False, save_every=3,
                               mesh=training_mesh(4), split="runs")
            for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(batch[0]), strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        print("same learning", preset)
    """
)


@pytest.mark.parametrize(
    "presets",
    [("ippo-ff", "qmix"), pytest.param(("ippo-rnn", "pqn-vdn"), marks=pytest.mark.slow)],
)
def test_a_run_split_over_devices_learns_as_on_one(presets: tuple[str, ...]) -> None:
    out = run_on_host_devices(SCRIPT.replace("sys.argv[1:]", repr(list(presets))), devices=8)
    for preset in presets:
        assert f"same learning {preset}" in out


def fake_mesh(devices: int) -> jax.sharding.Mesh:
    """A mesh of this process's one device repeated (checks only: nothing runs on it)."""
    return jax.sharding.Mesh(jax.devices() * devices, ("games",))


@pytest.mark.parametrize(
    ("preset", "changes", "message"),
    [
        ("ippo-ff", {"num_envs": 6}, r"^num_envs: 6 games do not split evenly over the 4"),
        ("ippo-ff", {"num_envs": 8, "minibatches": 4},
         r"^minibatches: 2 games each do not split evenly over the 4 devices"),
        ("qmix", {"num_envs": 4, "replay_rows": 20},
         r"^replay_rows: 5 sequences of the replay do not split evenly over the 4"),
        ("qmix", {"num_envs": 8, "replay_rows": 32, "batch_sequences": 6},
         r"^batch_sequences: 6 sequences do not split evenly over the 4"),
    ],
)  # fmt: skip
def test_a_split_the_devices_cannot_share_evenly_is_refused(preset, changes, message) -> None:
    with pytest.raises(ConfigError, match=message):
        make_train(tiny_config(preset, **changes), mesh=fake_mesh(4))


def test_a_batch_split_by_runs_needs_runs_the_devices_share_evenly(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"^split: 3 runs do not split evenly over the 4 dev"):
        runs_layout(fake_mesh(4), 3)
    cfg = tiny_config("ippo-ff")
    with pytest.raises(ConfigError, match=r"^split: expected one of \['games', 'runs'\], got 'x'"):
        train_runs([cfg], [0], [tmp_path], split="x")


def test_the_mesh_of_devices_is_checked() -> None:
    assert training_mesh() is None  # a lone CPU: one device
    assert training_mesh(1) is None
    count = jax.device_count()
    with pytest.raises(ConfigError, match=rf"^devices: expected 1-{count} \(the visible"):
        training_mesh(count + 1)
    with pytest.raises(ConfigError, match=r"^devices: expected 1-"):
        training_mesh(0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("127.0.0.1:1234", None, None), r"^num_processes: a job of several hosts needs all of"),
        ((None, 2, 0), r"^coordinator: a job of several hosts needs all of"),
        (("127.0.0.1:1234", 2, 2), r"^process_id: expected 0-1, got 2"),
        (("127.0.0.1:1234", 0, 0), r"^num_processes: at least 1, got 0"),
        (("nohost", 2, 0), r"^coordinator: expected HOST:PORT, got 'nohost'"),
    ],
)
def test_joining_a_job_needs_its_three_settings(args, message) -> None:
    with pytest.raises(ConfigError, match=message):
        join_job(*args)


def test_importing_the_packages_leaves_jax_distributed_free_to_start() -> None:
    """`jax.distributed.initialize` must come before any JAX computation: importing the engine,
    the trainers and the command line must not start a backend (a module-level `jnp` constant
    did)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = textwrap.dedent(
        f"""
        import marl_bgs, marl_bgs_eval, marl_bgs_train, marl_bgs_train.cli, marl_bgs_train.runs
        import marl_bgs_train.batch, marl_bgs_train.validation
        from marl_bgs_train.devices import join_job
        join_job("127.0.0.1:{port}", 1, 0)
        import jax
        print("joined", jax.process_count())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "joined 1" in done.stdout


# Two processes of two simulated CPU devices each, one `jax.distributed` job on the loopback
# address: two updates through `train_run` over the 4-device mesh, then the command line's
# `resume` (the job's settings from its environment variables) to a third.
JOB = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    run_dir = Path(os.environ["RUN_DIR"])
    if sys.argv[1:] == ["resume"]:
        for name in ("COORDINATOR", "NUM_PROCESSES", "PROCESS_ID"):
            os.environ["MARL_BGS_" + name] = os.environ[name]
        from marl_bgs_train.cli import app
        app(["resume", str(run_dir), "--steps", str(16 * 4 * 3), "--save-every", "1",
             "--quiet"], standalone_mode=False)
    else:
        from marl_bgs_train.devices import join_job, training_mesh
        join_job(os.environ["COORDINATOR"], int(os.environ["NUM_PROCESSES"]),
                 int(os.environ["PROCESS_ID"]))
        import jax
        from marl_bgs_train.runs import train_run
        from marl_bgs_train.testing import tiny_config
        assert (jax.process_count(), jax.device_count()) == (2, 4)
        cfg = tiny_config("ippo-ff", num_envs=16, minibatches=2, total_steps=16 * 4 * 2)
        train_run(cfg, run_dir, seed=3, progress=False, save_every=1, mesh=training_mesh())
    print("trained")
    """
)
ALONE = textwrap.dedent(
    """
    import os, numpy as np, jax
    from marl_bgs_train.devices import training_mesh
    from marl_bgs_train.runs import load_trainer, train_run
    from marl_bgs_train.testing import tiny_config
    cfg = tiny_config("ippo-ff", num_envs=16, minibatches=2, total_steps=16 * 4 * 3)
    alone = train_run(cfg, os.environ["ALONE_DIR"], seed=3, progress=False, save_every=1,
                      mesh=training_mesh(4))
    _, job = load_trainer(os.environ["RUN_DIR"])
    assert int(job.update) == 3
    np.testing.assert_array_equal(job.env_state.units.pos, alone.env_state.units.pos)
    for a, b in zip(jax.tree.leaves(job.actor), jax.tree.leaves(alone.actor), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    print("same run")
    """
)


@pytest.mark.slow
def test_a_job_on_two_hosts_trains_and_resumes_as_one_process(tmp_path) -> None:
    from marl_bgs.testing import run_local_processes

    run_dir = tmp_path / "job"
    env = {"RUN_DIR": str(run_dir), "ALONE_DIR": str(tmp_path / "alone")}
    for stage in ("", "resume"):
        script = JOB.replace("sys.argv[1:]", repr([stage] if stage else []))
        outs = run_local_processes(script, processes=2, devices=2, env=env)
        assert all("trained" in out for out in outs)
    log = (run_dir / "log.csv").read_text().splitlines()
    assert len(log) == 1 + 3  # one header, one row per update: process 0 writes alone
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["1", "2", "3"]
    os.environ.update(env)
    try:
        assert "same run" in run_on_host_devices(ALONE, devices=4)
    finally:
        for name in env:
            os.environ.pop(name)
