"""Several hosts, simulated by local processes: `jax.distributed` joins two processes of two CPU
devices each into one 4-device mesh; a batch split over it plays the games of one device.

Slow (two fresh processes compile the rollout), so it runs with `-m slow`.
"""

from __future__ import annotations

import textwrap

import jax
import numpy as np
import pytest

from marl_bgs.testing import run_local_processes

pytestmark = pytest.mark.slow

ROLLOUT = textwrap.dedent(
    """
    import jax, marl_bgs

    def rollout(mesh=None):
        env = marl_bgs.make("tdm", map_id=47, num_envs=8, tick_limit=8, mesh=mesh)

        @jax.jit
        def run(key):
            _, state = env.reset(key)

            def tick(state, k):
                _, state, _, _, _ = env.step(None, state, env.sample_actions(k, state))
                return state, None

            state, _ = jax.lax.scan(tick, state, jax.random.split(key, 6))
            return state.units.pos, state.score

        return run(jax.random.key(3))
    """
)

WORKER = ROLLOUT + textwrap.dedent(
    """
    import os, sys, numpy as np
    from jax.experimental import multihost_utils
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(os.environ["COORDINATOR"], int(os.environ["NUM_PROCESSES"]),
                               int(os.environ["PROCESS_ID"]))
    assert (jax.process_count(), jax.device_count(), jax.local_device_count()) == (2, 4, 2)
    out = rollout(jax.make_mesh((4,), ("games",)))
    pos, score = (np.asarray(multihost_utils.process_allgather(x, tiled=True)) for x in out)
    if jax.process_index() == 0:
        np.savez(os.environ["OUT"], pos=pos, score=score)
    print("done", jax.process_index())
    """
)


def test_two_processes_play_the_games_of_one_device(tmp_path) -> None:
    out = tmp_path / "multi.npz"
    stdouts = run_local_processes(WORKER, processes=2, devices=2, env={"OUT": str(out)})
    assert all("done" in s for s in stdouts)
    namespace: dict = {}
    exec(ROLLOUT, namespace)  # the same rollout on this process's one device
    pos, score = namespace["rollout"]()
    multi = np.load(out)
    np.testing.assert_array_equal(multi["pos"], np.asarray(pos))
    np.testing.assert_array_equal(multi["score"], np.asarray(score))
    assert jax.device_count() == 1  # the comparison ran unsharded
