"""evaluate with its batch split over a device mesh: the same results table as one device.

Runs in a fresh process with 4 host CPU devices (`--xla_force_host_platform_device_count`).
"""

from __future__ import annotations

import textwrap

import jax
import pytest

import marl_bgs_eval as ev
from marl_bgs.testing import run_on_host_devices

SCRIPT = textwrap.dedent(
    """
    import jax, pandas as pd, marl_bgs_eval as ev
    assert jax.device_count() == 4
    mesh = jax.make_mesh((4,), ("games",))
    kw = dict(maps=[0, 12], games_per_map=8, seed=7, tick_limit=40, winning_score=5, batch_size=8)
    one = ev.evaluate("random", "idle", **kw)
    many = ev.evaluate("random", "idle", mesh=mesh, **kw)
    pd.testing.assert_frame_equal(one, many)
    print("identical", len(many))
    """
)


def test_a_sharded_evaluation_gives_the_same_table() -> None:
    assert "identical 16" in run_on_host_devices(SCRIPT, devices=4)


def test_a_batch_that_does_not_split_is_refused(kit) -> None:
    fake = jax.sharding.Mesh(jax.devices() * 4, ("games",))
    with pytest.raises(ev.EvalError, match=r"^batch_size: 6 games do not split evenly over the 4"):
        ev.evaluate(kit.rush, "random", batch_size=6, mesh=fake, **kit.settings)
