"""evaluate across hosts, simulated by local processes: two processes of two CPU devices each
split every batch over one 4-device mesh and return the table of a one-device run.

Slow (two fresh processes compile the play loop), so it runs with `-m slow`.
"""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

import marl_bgs_eval as ev
from marl_bgs.testing import run_local_processes

pytestmark = pytest.mark.slow

SETTINGS = {"maps": [0, 12], "games_per_map": 8, "seed": 7, "tick_limit": 40, "winning_score": 5}
SETTINGS["batch_size"] = 8
WORKER = textwrap.dedent(
    f"""
    import os, jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(os.environ["COORDINATOR"], int(os.environ["NUM_PROCESSES"]),
                               int(os.environ["PROCESS_ID"]))
    import marl_bgs_eval as ev
    mesh = jax.make_mesh((4,), ("games",))
    games = ev.evaluate("random", "idle", mesh=mesh, **{SETTINGS!r})
    games.to_parquet(os.environ["OUT"] + f".{{jax.process_index()}}.parquet")
    print("done", len(games))
    """
)


def test_two_processes_evaluate_the_games_of_one_device(tmp_path) -> None:
    stdouts = run_local_processes(WORKER, processes=2, devices=2, env={"OUT": str(tmp_path / "g")})
    assert all("done 16" in s for s in stdouts)
    one = ev.evaluate("random", "idle", **SETTINGS)
    for i in range(2):  # every process holds the whole table
        got = ev.results.normalize(pd.read_parquet(tmp_path / f"g.{i}.parquet"))
        pd.testing.assert_frame_equal(got, one)
