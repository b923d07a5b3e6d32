"""Training runs on disk: the update loop with a progress bar, logs (JSONL and CSV, one row per
update), checkpoints, a learning-curve picture, and loading a run's policy back. One run trains
alone (`train_run`); many runs that differ only in their seeds and sweepable settings train as
one compiled program, each in its own folder (`train_runs`).

Layout of `run_dir`: `config.json`, `checkpoints/<update>/`, `log.jsonl`, `log.csv`,
`curve.png`, and with `tensorboard` the event files in `tensorboard/`.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from marl_bgs import ConfigError, Policy
from marl_bgs_eval import System, system
from marl_bgs_eval.progress import progress_bar
from marl_bgs_train import checkpoints
from marl_bgs_train.config import PPOConfig, PQNConfig, QMIXConfig
from marl_bgs_train.devices import SPLITS, runs_layout
from marl_bgs_train.hypers import sweepable
from marl_bgs_train.learners import Trainer, make_train
from marl_bgs_train.players import PLAYERS_FILE, load_players
from marl_bgs_train.policy import network_act, network_policy

LOG_JSONL, LOG_CSV, CURVE = "log.jsonl", "log.csv", "curve.png"
TENSORBOARD = "tensorboard"  # event files, with --tensorboard


def log_row(metrics: dict[str, Any], seconds: float, steps_per_update: int) -> dict[str, float]:
    """One update's metrics as a flat row, with rates: win rate and mean point margin over the
    games that finished in it, game steps per second of the whole update."""
    row = {k: float(np.asarray(v).reshape(-1)[0]) for k, v in metrics.items()}
    games = max(row["games"], 1.0)
    row["win_rate"] = row["wins"] / games
    row["margin"] = row["margin_sum"] / games
    row["steps_per_second"] = steps_per_update / max(seconds, 1e-9)
    return row


def train_run(
    config: PPOConfig | PQNConfig | QMIXConfig,
    run_dir: str | Path,
    seed: int = 0,
    resume: bool = False,
    frozen: Sequence[Policy] = (),
    teammate: Policy | None = None,
    save_every: int = 50,
    progress: bool = True,
    on_update: Callable[[dict[str, float]], None] | None = None,
    on_save: Callable[[int], object] | None = None,
    tensorboard: bool = False,
    mesh: Mesh | None = None,
    deadline: float | None = None,
) -> Any:
    """Train `config` into `run_dir` (or continue its newest checkpoint with `resume`), saving
    every `save_every` updates and at the end (and where it stops at `deadline`: `train_runs`).
    `frozen`: the frozen opponent pool, `teammate`: the frozen teammate (a resumed run needs the
    same: `players.save_players` remembers them). `on_save(update)` runs after each checkpoint
    is on disk (e.g. validation). `tensorboard`: also write every logged scalar for TensorBoard
    into `run_dir/tensorboard` (needs `marl-bgs-train[tensorboard]`). `mesh`: split the games
    over its devices (`make_train`). Returns the final state."""
    (state,) = train_runs(
        [config], [seed], [Path(run_dir)], batched=False, resume=resume, frozen=frozen,
        teammate=teammate, save_every=save_every, progress=progress,
        on_update=None if on_update is None else (lambda i, row: on_update(row)),
        on_save=None if on_save is None else (lambda i, update: on_save(update)),
        tensorboard=tensorboard, mesh=mesh, deadline=deadline,
    )  # fmt: skip
    return state


def train_runs(
    configs: Sequence[PPOConfig | PQNConfig | QMIXConfig],
    seeds: Sequence[int],
    run_dirs: Sequence[Path],
    batched: bool = True,
    resume: bool = False,
    frozen: Sequence[Policy] = (),
    teammate: Policy | None = None,
    save_every: int = 50,
    progress: bool = True,
    on_update: Callable[[int, dict[str, float]], None] | None = None,
    on_save: Callable[[int, int], object] | None = None,
    tensorboard: bool = False,
    mesh: Mesh | None = None,
    split: str = "games",
    save_at: Collection[int] = (),
    deadline: float | None = None,
) -> list[Any]:
    """Train run i (`configs[i]` from `seeds[i]`) into `run_dirs[i]`, every run a folder of its
    own (config, logs, checkpoints, curve). `batched`: all runs in one compiled program (`vmap`;
    their configs may differ only in sweepable settings, `hypers`); else one run, alone.
    Checkpoints are saved every `save_every` updates, after the last and after each update in
    `save_at` (a milestone, say). `deadline` (a `time.monotonic()` reading): the first update
    that ends at or after it is saved, not passed to `on_save` (no scheduled checkpoint), and
    training stops there; `resume=True` continues it exactly.
    `on_update(i, row)` and `on_save(i, update)` name the run. `mesh`: each run's games split
    over its devices (`make_train`), or with `split="runs"` a batch's runs (each device trains
    whole runs: no traffic between devices). Returns each run's final state."""
    first = configs[0]
    if not batched and len(configs) != 1:
        raise ConfigError(f"configs: one run trains alone, got {len(configs)}")
    lead = jax.process_index() == 0  # of a job on several hosts, the one that writes logs
    if batched and jax.process_count() > 1:
        raise ConfigError(
            f"batched: runs of one program train on one host; this job has {jax.process_count()} "
            "processes (train one run per job across hosts, or the batch on one host)"
        )
    if split not in SPLITS:
        raise ConfigError(f"split: expected one of {list(SPLITS)}, got {split!r}")
    whole_runs = batched and mesh is not None and split == "runs"  # each device its own runs
    games_mesh = None if whole_runs else mesh
    trainers = {c: make_train(c, frozen, teammate, games_mesh) for c in dict.fromkeys(configs)}
    trainer = trainers[first]
    if (
        len({t.program_key() for t in trainers.values()}) > 1
        or len({c.total_steps for c in configs}) > 1
    ):
        raise ConfigError(
            "configs: runs trained as one program may differ only in "
            f"{list(sweepable(first))} (layouts of one size) and their seeds"
        )
    hypers = _stack([trainers[c].hyper() for c in configs])
    layout = runs_layout(mesh, len(configs)) if whole_runs and mesh is not None else None
    managers = [checkpoints.manager(d) for d in run_dirs]
    if resume:
        like = trainer.state_layout()
        states = [checkpoints.restore(m, like) for m in managers]
        if len({int(st.update) for st in states}) > 1:
            raise ConfigError(f"run_dir: the runs' newest checkpoints differ in update: {run_dirs}")
    else:
        for config, run_dir in zip(configs, run_dirs, strict=True):
            if lead:
                checkpoints.save_config(run_dir, config)
                for name in (LOG_JSONL, LOG_CSV):
                    (run_dir / name).unlink(missing_ok=True)
        keys = jnp.stack([jax.random.key(s) for s in seeds])
        states = (
            trainer.init_many(keys, hypers) if batched else jax.jit(trainer.init)(keys[0])
        )  # fmt: skip
    if resume:
        states = _stack(states) if batched else states[0]
    if layout is not None:  # every run's state and settings on its device
        states, hypers = jax.device_put((states, hypers), layout)
    count = len(configs)
    done, total, per = _update(states), first.num_updates, first.steps_per_update
    writers = [tensorboard_writer(d) if tensorboard and lead else None for d in run_dirs]
    name = first.name if count == 1 else f"{first.name} x {count} runs"
    shown = progress and lead
    with progress_bar(shown, total * per * count, name, "steps", start=done * per * count,
                      status="compiling", transient=False) as show:  # fmt: skip
        while done < total:
            started = time.perf_counter()
            if batched:
                states, metrics = trainer.run_many(states, 1, hypers)
            else:
                states, metrics = trainer.run(states, 1)
            metrics = jax.device_get(metrics)
            seconds = time.perf_counter() - started
            done = _update(states)
            per_run = (
                [{k: v[i] for k, v in metrics.items()} for i in range(count)]
                if batched
                else [metrics]
            )
            rows = [log_row(m, seconds, per * count) for m in per_run]
            for row, run_dir, writer in zip(rows, run_dirs, writers, strict=True):
                if lead:
                    _append(run_dir, {"update": done, **row})
                if writer is not None:
                    for key, value in row.items():
                        writer.add_scalar(key, value, global_step=int(row["steps"]))
                    writer.flush()
            row = rows[0]
            status = (f"{row['steps_per_second']:,.0f} steps/s  win {row['win_rate']:.0%}  "
                      f"reward/tick {row['reward_per_tick']:+.4f}")  # fmt: skip
            show(done * per * count, done * per * count, status)
            scheduled = is_scheduled(done, save_every, total, save_at)
            stopping = _past(deadline) and done < total
            if scheduled or stopping:
                for i, mgr in enumerate(managers):  # one run's copy at a time (memory)
                    # every process saves its own devices' part (orbax writes one checkpoint)
                    checkpoints.save(mgr, _run_of(states, i) if batched else states)
                if scheduled and on_save is not None and lead:  # once every run is saved
                    for i in range(count):
                        show(done * per * count, done * per * count, "validating")
                        on_save(i, done)
            if on_update is not None and lead:  # after the checkpoint: a stop loses nothing
                for i, row in enumerate(rows):
                    on_update(i, row)
            if stopping:
                break
    for run_dir, writer in zip(run_dirs, writers, strict=True):
        if writer is not None:
            writer.close()
        if lead:
            plot_curve(run_dir)
    return [_run_of(states, i) for i in range(count)] if batched else [states]


def is_scheduled(update: int, save_every: int, total: int, save_at: Collection[int] = ()) -> bool:
    """Whether `train_runs` saves (and passes to `on_save`) the checkpoint after `update`."""
    return update % save_every == 0 or update == total or update in save_at


def _past(deadline: float | None) -> bool:
    """Whether `deadline` has passed; on a job of several hosts, as its first process sees it
    (every process must stop after the same update)."""
    if deadline is None:
        return False
    past = time.monotonic() >= deadline
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        past = bool(multihost_utils.broadcast_one_to_all(np.bool_(past)))
    return past


def finished(run_dir: str | Path) -> bool:
    """Whether the run's newest checkpoint is its last update's (False before its first)."""
    if not Path(run_dir).exists():
        return False
    latest = checkpoints.manager(run_dir).latest_step()
    return latest is not None and latest == checkpoints.load_config(run_dir).num_updates


def _update(states: Any) -> int:
    """The updates done (every run of a batch has done as many)."""
    return int(np.asarray(states.update).reshape(-1)[0])


def _host(leaf: Any) -> np.ndarray:
    """A leaf's values on the host (a typed key as its raw data)."""
    is_key = jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)
    return np.asarray(jax.random.key_data(leaf) if is_key else leaf)


def _stack(trees: Sequence[Any]) -> Any:
    """Pytrees stacked on a new leading axis, on the host (no program per leaf shape)."""

    def stack(*leaves: Any) -> Any:
        stacked = jnp.asarray(np.stack([_host(leaf) for leaf in leaves]))
        is_key = jnp.issubdtype(leaves[0].dtype, jax.dtypes.prng_key)
        return jax.random.wrap_key_data(stacked) if is_key else stacked

    return jax.tree_util.tree_map(stack, *trees)


def _run_of(tree: Any, i: int) -> Any:
    """Pytree `i` of those stacked on `tree`'s leading axis, cut on the host."""

    def cut(leaf: Any) -> Any:
        if jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            return jax.random.wrap_key_data(jnp.asarray(_host(leaf)[i]))
        return jnp.asarray(_host(leaf)[i])

    return jax.tree_util.tree_map(cut, tree)


# What installs the [tensorboard] extra's one package (the train tests check it is the extra's).
TENSORBOARD_INSTALL = "pip install 'tensorboardX>=2.6,<3'"


def tensorboard_writer(run_dir: Path) -> Any:
    """A TensorBoard writer into `run_dir/tensorboard` (`tensorboard --logdir RUN_DIR`)."""
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        raise ConfigError(f"tensorboard: needs tensorboardX; {TENSORBOARD_INSTALL}") from None
    return SummaryWriter(str(run_dir / TENSORBOARD))


def _append(run_dir: Path, row: dict[str, float]) -> None:
    with (run_dir / LOG_JSONL).open("a") as f:
        f.write(json.dumps(row) + "\n")
    path = run_dir / LOG_CSV
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def read_log(run_dir: str | Path) -> list[dict[str, float]]:
    """A run's update rows, oldest first."""
    path = Path(run_dir) / LOG_JSONL
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plot_curve(run_dir: str | Path, window: int = 10) -> Path | None:
    """`curve.png`: win rate, point margin and reward per tick against game steps (moving
    averages over `window` updates). None when the run has no log yet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_log(run_dir)
    if not rows:
        return None
    steps = np.asarray([r["steps"] for r in rows])
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), constrained_layout=True)
    for ax, key, label in zip(
        axes,
        ("win_rate", "margin", "reward_per_tick"),
        ("win rate (finished games)", "point margin per game", "reward per agent tick"),
        strict=True,
    ):
        values = np.asarray([r[key] for r in rows])
        smooth = moving_average(values, window)
        ax.plot(steps, values, alpha=0.3, color="tab:blue")
        ax.plot(steps[len(steps) - smooth.shape[-1] :], smooth, color="tab:blue")
        ax.set_xlabel("game steps")
        ax.set_title(label)
        ax.grid(alpha=0.3)
    path = Path(run_dir) / CURVE
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """Means over `window` consecutive updates along the last axis (the whole length if
    shorter): len - window + 1 values, the first ending at update `window`."""
    k = max(1, min(window, values.shape[-1]))
    return np.apply_along_axis(lambda v: np.convolve(v, np.ones(k) / k, mode="valid"), -1, values)


def load_trainer(run_dir: str | Path, step: int | None = None) -> tuple[Trainer, Any]:
    """A run's trainer (from its config) and its saved state after update `step` (default:
    the newest)."""
    config = checkpoints.load_config(run_dir)
    frozen, teammate = load_players(run_dir)
    trainer = make_train(config, frozen, teammate)
    like = trainer.state_layout()
    return trainer, checkpoints.restore(checkpoints.manager(run_dir, keep=None), like, step)


def keep_copy(run_dir: str | Path, step: int, folder: str, **info: Any) -> Path:
    """Copy the run's checkpoint after update `step` to `RUN_DIR/folder`, a run of its own
    (config, fixed players, that one checkpoint; `ckpt:RUN_DIR/folder` is its System), with
    `folder/<folder>.json` saying which update it is and `info`, written last (a copy stopped
    half way has no marker). Returns the copy's folder."""
    run_dir = Path(run_dir)
    trainer, state = load_trainer(run_dir, step)
    target = run_dir / folder
    marker = target / f"{folder}.json"
    marker.unlink(missing_ok=True)
    mgr = checkpoints.manager(target, keep=1)
    if step in mgr.all_steps():  # a copy stopped half way: made again
        mgr.delete(step)
    checkpoints.save(mgr, state)
    checkpoints.save_config(target, trainer.config)
    players = run_dir / PLAYERS_FILE
    if players.exists():
        (target / PLAYERS_FILE).write_text(players.read_text())
    partial = marker.with_suffix(".partial")
    partial.write_text(json.dumps({"update": step, **info}) + "\n")
    partial.replace(marker)
    return target


def kept_info(copy_dir: str | Path) -> dict[str, Any] | None:
    """What a `keep_copy` folder's marker says ({"update", ...}), None where there is no
    complete copy (no marker, or a checkpoint of another update); `ConfigError` naming a
    damaged marker."""
    copy_dir = Path(copy_dir)
    marker = copy_dir / f"{copy_dir.name}.json"
    if not marker.exists():
        return None
    try:
        info = json.loads(marker.read_text())
        update = info["update"]
        if isinstance(update, bool) or not isinstance(update, int):
            raise TypeError("update: expected a whole number")
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise ConfigError(f"run_dir: {marker} is not a checkpoint copy's record ({err})") from None
    if checkpoints.manager(copy_dir, keep=None).latest_step() != update:
        return None
    return info


def kept_update(copy_dir: str | Path) -> int | None:
    """The update a `keep_copy` folder holds (None where there is no complete copy)."""
    info = kept_info(copy_dir)
    return None if info is None else int(info["update"])


def _ckpt_name(run_dir: str | Path, step: int | None) -> str:
    """A checkpoint's System name: `ckpt:RUN_DIR` (its newest) or `ckpt:RUN_DIR@STEP`."""
    return f"ckpt:{run_dir}" + ("" if step is None else f"@{step}")


def run_policy(run_dir: str | Path, step: int | None = None, greedy: bool = False) -> Policy:
    """A checkpoint's actor as a team policy (sampling, or `greedy`), reading only its team's
    permitted inputs."""
    trainer, state = load_trainer(run_dir, step)
    return network_policy(trainer.actor_spec, state.actor, _ckpt_name(run_dir, step), greedy)


def run_system(run_dir: str | Path, step: int | None = None, greedy: bool = False) -> System:
    """A checkpoint's actor as a parametric evaluation System of the run's mode (`run_policy`):
    its weights are data, so every checkpoint of the run plays through one compiled program."""
    trainer, state = load_trainer(run_dir, step)
    act, init = network_act(trainer.actor_spec, greedy)
    name = _ckpt_name(run_dir, step)
    return system(act, name=name, init=init, params=state.actor, mode=trainer.config.mode)
