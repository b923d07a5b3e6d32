"""A season played by a job of two hosts (local processes of two simulated CPU devices each,
`jax.distributed` on the loopback address) publishes the games and ratings one process
publishes. Slow (fresh processes compile the games), so it runs with `-m slow`."""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

from marl_bgs.testing import run_local_processes
from marl_bgs_eval import results
from marl_bgs_tournament import Settings, run_season
from marl_bgs_tournament.season import ALL_GAMES, read_season

pytestmark = pytest.mark.slow

SETTINGS = {
    "maps": (47, 48), "pairs_per_map": 1, "tick_limit": 30, "batch_size": 4,
    "bootstrap": 50, "progress": False,
}  # fmt: skip
JOB = textwrap.dedent(
    f"""
    import os, jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(os.environ["COORDINATOR"], int(os.environ["NUM_PROCESSES"]),
                               int(os.environ["PROCESS_ID"]))
    from marl_bgs_tournament import Settings, run_season
    record = run_season(["random", "idle", "rush"], os.environ["OUT"], Settings(**{SETTINGS!r}))
    print("seed", record["root_seed"])
    """
)


def test_a_season_on_two_hosts_publishes_the_season_of_one(tmp_path) -> None:
    job = tmp_path / "job"
    outs = run_local_processes(JOB, processes=2, devices=2, env={"OUT": str(job)})
    seeds = {line for out in outs for line in out.splitlines() if line.startswith("seed")}
    assert len(seeds) == 1  # the processes agreed on process 0's root seed
    assert [p.name for p in tmp_path.iterdir()] == ["job"]  # one folder written
    root_seed = read_season(job)["root_seed"]
    alone = tmp_path / "alone"
    run_season(["random", "idle", "rush"], alone, Settings(**SETTINGS), root_seed=root_seed)
    pd.testing.assert_frame_equal(results.load(job / ALL_GAMES), results.load(alone / ALL_GAMES))
    assert (job / "ratings.csv").read_text() == (alone / "ratings.csv").read_text()
