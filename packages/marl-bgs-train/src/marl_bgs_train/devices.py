"""Where a run trains: the device mesh its games are split over, and joining a job of several
hosts. Both are JAX's own machinery (`jax.make_mesh`, `jax.distributed`); the learners take the
mesh (`make_train(config, mesh=...)`) and XLA partitions their programs."""

from __future__ import annotations

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from marl_bgs import ConfigError
from marl_bgs.core.env import auto_axes

GAMES = "games"  # the mesh axis the games are split along
SPLITS = ("games", "runs")  # what a batch of runs splits over the devices


def join_job(coordinator: str | None, num_processes: int | None, process_id: int | None) -> None:
    """Join a job of several hosts as process `process_id` of `num_processes`
    (`jax.distributed.initialize`, the coordinator at `host:port`), before any other JAX call;
    nothing when none of the three is given. CPU hosts exchange through gloo."""
    given = {"coordinator": coordinator, "num_processes": num_processes, "process_id": process_id}
    if coordinator is None or num_processes is None or process_id is None:
        missing = [k for k, v in given.items() if v is None]
        if len(missing) < len(given):
            raise ConfigError(f"{missing[0]}: a job of several hosts needs all of {list(given)}")
        return
    if num_processes < 1:
        raise ConfigError(f"num_processes: at least 1, got {num_processes}")
    if not 0 <= process_id < num_processes:
        raise ConfigError(f"process_id: expected 0-{num_processes - 1}, got {process_id}")
    host, _, port = coordinator.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"coordinator: expected HOST:PORT, got {coordinator!r}")
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator, num_processes, process_id)


def training_mesh(devices: int | None = None) -> Mesh | None:
    """The mesh a run's games are split over: the first `devices` of every host's devices
    (default: all of them on accelerators or in a job of several hosts, one on a lone CPU);
    None for one device."""
    available = jax.device_count()
    if devices is None:
        lone_cpu = jax.default_backend() == "cpu" and jax.process_count() == 1
        devices = 1 if lone_cpu else available
    if not 1 <= devices <= available:
        raise ConfigError(f"devices: expected 1-{available} (the visible devices), got {devices}")
    if jax.process_count() > 1 and devices != available:
        raise ConfigError(
            f"devices: a job of several hosts trains on all {available} of its devices, got "
            f"{devices}"
        )
    if devices == 1:
        return None
    return auto_axes(jax.make_mesh((devices,), (GAMES,), devices=jax.devices()[:devices]))


def runs_layout(mesh: Mesh, runs: int) -> NamedSharding:
    """The layout that splits a batch's leading runs axis over `mesh`'s first axis: each device
    trains whole runs (`split="runs"`); the runs must divide evenly among the devices."""
    axis = mesh.axis_names[0]
    if runs % mesh.shape[axis]:
        raise ConfigError(
            f"split: {runs} runs do not split evenly over the {mesh.shape[axis]} devices; use "
            f"a multiple of {mesh.shape[axis]} runs or split='games'"
        )
    return NamedSharding(auto_axes(mesh), PartitionSpec(axis))
