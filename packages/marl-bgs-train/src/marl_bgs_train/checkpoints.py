"""Saving and resuming runs with orbax: the whole `RunnerState` (parameters, optimisers, value
statistics, ongoing games, memories, opponents and saved copies, the random stream, counters)
plus the run's config as JSON, so a resumed run repeats the uninterrupted one exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import orbax.checkpoint as ocp

from marl_bgs import ConfigError
from marl_bgs_train.config import PPOConfig, PQNConfig, QMIXConfig, from_dict, to_dict

CONFIG_FILE = "config.json"


def manager(
    run_dir: str | Path, keep: int | None = 3, folder: str = "checkpoints"
) -> ocp.CheckpointManager:
    """Checkpoints under `run_dir/folder`, one per saved update, the newest `keep` kept."""
    path = Path(run_dir).absolute() / folder
    options = ocp.CheckpointManagerOptions(max_to_keep=keep, create=True)
    return ocp.CheckpointManager(path, options=options)


def save_config(run_dir: str | Path, config: PPOConfig | PQNConfig | QMIXConfig) -> None:
    """Write the run's config beside its checkpoints."""
    path = Path(run_dir)
    path.mkdir(parents=True, exist_ok=True)
    (path / CONFIG_FILE).write_text(json.dumps(to_dict(config), indent=2) + "\n")


def load_config(run_dir: str | Path) -> PPOConfig | PQNConfig | QMIXConfig:
    """The config a run was started with (raises `ConfigError` if missing or malformed)."""
    path = Path(run_dir) / CONFIG_FILE
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise TypeError("not an object")
        return from_dict(data)
    except FileNotFoundError:
        raise ConfigError(f"run_dir: {path} not found (not a training run)") from None
    except (ValueError, TypeError) as err:
        raise ConfigError(f"run_dir: {path} is not a valid training config ({err})") from None


def _is_key(leaf: Any) -> bool:
    return jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)


def _key_data(leaf: Any) -> Any:
    if isinstance(leaf, jax.ShapeDtypeStruct):  # a restore target
        return jax.eval_shape(jax.random.key_data, leaf)
    return jax.random.key_data(leaf)


def _stored(tree: Any) -> dict[str, Any]:
    """The leaves orbax stores, by position (orbax refuses empty arrays, such as the messages of
    a game without messages; those are rebuilt from their shapes on restore; typed random keys
    are stored as their raw data)."""
    leaves = jax.tree_util.tree_leaves(tree)
    data = [_key_data(leaf) if _is_key(leaf) else leaf for leaf in leaves]
    return {f"{i:05d}": leaf for i, leaf in enumerate(data) if leaf.size > 0}


def save(mgr: ocp.CheckpointManager, state: Any, step: int | None = None) -> None:
    """Save `state` under `step` (default: its update count) and wait until it is on disk."""
    step = int(jax.device_get(state.update)) if step is None else step
    mgr.save(step, args=ocp.args.StandardSave(_stored(state)), force=True)
    mgr.wait_until_finished()


def restore(mgr: ocp.CheckpointManager, like: Any, step: int | None = None) -> Any:
    """The saved state at `step` (default: the newest), shaped like `like` (e.g.
    `jax.eval_shape(trainer.init, key)`, or `trainer.state_layout()` to restore each array
    straight into its layout over a mesh's devices)."""
    step = mgr.latest_step() if step is None else step
    if step is None:
        raise ConfigError(f"run_dir: no checkpoint under {mgr.directory}")
    # Without a layout, onto this process's first device, however the run was split when saved.
    here = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
    target = {
        k: jax.ShapeDtypeStruct(v.shape, v.dtype, sharding=getattr(v, "sharding", None) or here)
        for k, v in _stored(like).items()
    }
    loaded = mgr.restore(step, args=ocp.args.StandardRestore(target))
    leaves, treedef = jax.tree_util.tree_flatten(like)
    rebuilt = [
        jnp.zeros(leaf.shape, leaf.dtype) if leaf.size == 0
        else jax.random.wrap_key_data(loaded[f"{i:05d}"]) if _is_key(leaf)
        else loaded[f"{i:05d}"]
        for i, leaf in enumerate(leaves)
    ]  # fmt: skip
    return jax.tree_util.tree_unflatten(treedef, rebuilt)
