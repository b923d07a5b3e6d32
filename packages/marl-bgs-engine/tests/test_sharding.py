"""The games axis sharded over a device mesh: same games as one device, bit for bit.

The sharded run needs several devices, so it runs in a fresh process with 8 host CPU devices
(`XLA_FLAGS=--xla_force_host_platform_device_count=8`), as on a machine with 8 accelerators.
"""

from __future__ import annotations

import textwrap

import jax
import numpy as np
import pytest

import marl_bgs
from marl_bgs import ConfigError
from marl_bgs.testing import run_on_host_devices

SCRIPT = textwrap.dedent(
    """
    import jax, numpy as np, marl_bgs
    assert jax.device_count() == 8, jax.devices()
    mesh = jax.make_mesh((8,), ("games",))

    def roll(env, ticks=12):
        @jax.jit
        def run(key):
            _, state = env.reset(key)
            def tick(state, k):
                k_act, k_reset = jax.random.split(k)
                actions = env.sample_actions(k_act, state)
                obs, state, reward, _, info = env.step(None, state, actions)
                obs, state = env.reset_done(k_reset, state)
                return state, (env.stack(obs), env.stack(reward), info["facts"])
            return jax.lax.scan(tick, state, jax.random.split(key, ticks))
        return run(jax.random.key(3))

    kw = dict(map_id=[47, 0], num_envs=16, tick_limit=8)
    one = roll(marl_bgs.make("tdm", **kw))
    many = roll(marl_bgs.make("tdm", mesh=mesh, **kw))
    for x, y in zip(jax.tree.leaves(one), jax.tree.leaves(many), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    final = many[0]
    assert final.tick.sharding.spec == jax.sharding.PartitionSpec("games"), final.tick.sharding
    assert len(final.units.pos.addressable_shards) == 8
    assert {s.data.shape[0] for s in final.units.pos.addressable_shards} == {2}
    # Start schedules are laid out the same way.
    env = marl_bgs.make("tdm", mesh=mesh, **kw)
    starts = env.start_games(np.zeros(16, int), np.zeros(16, int), np.arange(16) % 2 == 1)
    assert len(starts.tick.addressable_shards) == 8
    print("sharded run identical")
    """
)


@pytest.mark.default_compile  # the sharded and the one-device programs, bit for bit
def test_a_sharded_batch_plays_the_same_games_as_one_device() -> None:
    assert "sharded run identical" in run_on_host_devices(SCRIPT, devices=8)


def test_mesh_settings_are_checked() -> None:
    mesh = jax.make_mesh((1,), ("games",))
    env = marl_bgs.make("tdm", num_envs=3, mesh=mesh)
    assert env.sharding is not None
    with pytest.raises(ConfigError, match=r"^mesh: expected a jax.sharding.Mesh, got str"):
        marl_bgs.make("tdm", num_envs=2, mesh="gpu")
    with pytest.raises(ConfigError, match=r"^mesh_axis: expected one of \['games'\], got 'x'"):
        marl_bgs.make("tdm", num_envs=2, mesh=mesh, mesh_axis="x")
    with pytest.raises(ConfigError, match=r"^mesh_axis: 'games' given without a mesh"):
        marl_bgs.make("tdm", num_envs=2, mesh_axis="games")
    fake = jax.sharding.Mesh(np.array(jax.devices() * 4).reshape(4), ("games",))
    with pytest.raises(ConfigError, match=r"^num_envs: 6 games do not split evenly over the 4"):
        marl_bgs.make("tdm", num_envs=6, mesh=fake)
