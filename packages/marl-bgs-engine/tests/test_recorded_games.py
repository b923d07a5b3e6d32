"""Recorded games: a fixed set of Team Deathmatch games replayed and compared with what this mode
id recorded, tick by tick, so that no speed-up can change a game without the mode id changing.

Two segments on four maps (train, validation and test maps; mixed rosters; both spawn ends;
short games so that restarts happen): 16 games of random legal play (`sample_actions`, `step`,
`reset_done`) and 16 games of TDM-Alpha against TDM-Beta (`team_rollout`, the scripted teams
reading `team_inputs`). Every tick compares:

- every integer and boolean leaf of the state (classes, statuses, cooldowns, scores, outcomes,
  clocks, caches): one sha256 per tick, exact;
- the float leaves (positions, health, obstacles, rules) and the rewards, within 1e-5 (bit for bit
  on the machine that recorded them; the tolerance only absorbs another processor's float
  arithmetic);
- each agent's flat observation: which entries are non-zero (a sha256, exact) and its sum and sum
  of squares (summed in float64, relative 1e-5), so a moved or re-scaled field fails.

Record again only with a new mode id (`MODE_ID` is stored and checked):
`python packages/marl-bgs-engine/tests/test_recorded_games.py`.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs.tdm import MODE_ID

# Games a default build recorded: run at XLA's default optimisation level (docs/testing.md).
pytestmark = pytest.mark.default_compile

RECORD = Path(__file__).resolve().parent / "data" / "recorded_games.npz"
NUM_GAMES = 16
TICKS = 160
SETTINGS = {
    "map_id": [0, 13, 47, 51],
    "rosters": [("MWHRP", "MWHRP"), ("MMHHR", "WWRPP"), ("PPPRR", "HHWWM")],
    "num_envs": NUM_GAMES,
    "tick_limit": 70,
    "winning_score": 3,
    "spawn_swap": "random",
}
TOLERANCE = 1e-5


def _split(state: Any) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """The state's leaves as numpy, leading axes [ticks, games]: the exact ones (integers and
    booleans) in pytree order, and the float ones by their path (`pos`, `obstacles.turn`...)."""
    exact, floats = [], {}
    for path, leaf in jax.tree_util.tree_leaves_with_path(state):
        x = np.asarray(leaf)
        if np.issubdtype(x.dtype, np.floating):
            floats[jax.tree_util.keystr(path, simple=True, separator=".")] = x
        else:
            exact.append(x)
    return exact, floats


def _tick_hashes(exact: list[np.ndarray]) -> np.ndarray:
    """One sha256 per tick of the exact leaves [ticks, games, ...]."""
    out = []
    for t in range(exact[0].shape[0]):
        h = hashlib.sha256()
        for leaf in exact:
            h.update(np.ascontiguousarray(leaf[t]).tobytes())
        out.append(h.hexdigest())
    return np.asarray(out)


def _obs_record(obs: np.ndarray) -> dict[str, np.ndarray]:
    """[ticks, games, agents, D] observations -> what is recorded of them."""
    flat = obs.astype(np.float64)
    nonzero = [hashlib.sha256(np.packbits(o != 0).tobytes()).hexdigest() for o in obs]
    return {
        "obs_nonzero": np.asarray(nonzero),
        "obs_sum": flat.sum(axis=-1).astype(np.float32),
        "obs_square": np.square(flat).sum(axis=-1).astype(np.float32),
    }


def _segment_record(prefix: str, state: Any, reward: Any, obs: Any) -> dict[str, np.ndarray]:
    exact, floats = _split(state)
    out = {"hashes": _tick_hashes(exact), "reward": np.asarray(reward)}
    out["outcome"], out["score"] = np.asarray(state.outcome), np.asarray(state.score)
    out |= {f"state.{name}": x for name, x in floats.items()}
    out |= _obs_record(np.asarray(obs))
    return {f"{prefix}/{k}": v for k, v in out.items()}


def play_random(env: marl_bgs.BatchedEnv) -> dict[str, np.ndarray]:
    """Random legal play with restarts: the state, rewards and observations after every step."""

    @jax.jit
    def run(key: jax.Array) -> Any:
        _, state = env.reset(jax.random.fold_in(key, 0))

        def tick(state: Any, t: jax.Array) -> tuple[Any, Any]:
            k_act, k_reset = jax.random.split(jax.random.fold_in(key, t + 1))
            obs, nxt, reward, _, _ = env.step(k_act, state, env.sample_actions(k_act, state))
            _, restarted = env.reset_done(k_reset, nxt)
            stacked = jnp.stack([obs[a] for a in env.agents], axis=1)
            return restarted, (nxt, jnp.stack([reward[a] for a in env.agents], 1), stacked)

        return jax.lax.scan(tick, state, jnp.arange(TICKS))[1]

    return _segment_record("random", *run(jax.random.key(2026)))


def play_scripted(env: marl_bgs.BatchedEnv) -> dict[str, np.ndarray]:
    """TDM-Alpha (team A) against TDM-Beta (team B), restarts with fresh memories."""
    policies = [marl_bgs.scripted_policy("tdm-alpha"), marl_bgs.scripted_policy("tdm-beta")]

    def summarize(out: Any) -> Any:
        return out.state, out.reward, env.observe(out.state)

    run = jax.jit(marl_bgs.team_rollout(env, policies, TICKS, summarize))
    return _segment_record("scripted", *run(jax.random.key(7)))


def play_all() -> dict[str, np.ndarray]:
    env = marl_bgs.make("tdm", **SETTINGS)
    return {"mode_id": np.asarray(MODE_ID)} | play_random(env) | play_scripted(env)


@pytest.fixture(scope="module")
def played() -> dict[str, np.ndarray]:
    return play_all()


@pytest.fixture(scope="module")
def recorded() -> dict[str, np.ndarray]:
    with np.load(RECORD, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def test_recorded_for_this_mode_id(recorded: dict[str, np.ndarray]) -> None:
    assert str(recorded["mode_id"]) == MODE_ID, (
        f"the games were recorded for {recorded['mode_id']}, the mode is {MODE_ID}: record them "
        "again (python packages/marl-bgs-engine/tests/test_recorded_games.py)"
    )


def test_games_are_what_was_recorded(
    played: dict[str, np.ndarray], recorded: dict[str, np.ndarray]
) -> None:
    assert sorted(played) == sorted(recorded)
    for segment in ("random", "scripted"):
        got, want = played[f"{segment}/hashes"], recorded[f"{segment}/hashes"]
        differs = np.flatnonzero(got != want)
        assert differs.size == 0, f"{segment}: the exact state differs first at tick {differs[0]}"
    for name in sorted(played):
        if name.endswith(("/hashes", "mode_id", "/obs_nonzero")):
            continue
        np.testing.assert_allclose(
            played[name], recorded[name], rtol=TOLERANCE, atol=TOLERANCE, err_msg=name
        )
    for segment in ("random", "scripted"):
        got, want = played[f"{segment}/obs_nonzero"], recorded[f"{segment}/obs_nonzero"]
        differs = np.flatnonzero(got != want)
        assert differs.size == 0, f"{segment}: observations differ first after tick {differs[0]}"


def test_recorded_games_cover_the_rules(recorded: dict[str, np.ndarray]) -> None:
    """The record is worth comparing: games end and restart, units die, teams win and lose."""
    reward = recorded["scripted/reward"]
    assert np.any(reward > 0)
    assert np.any(reward < 0)
    for segment in ("random", "scripted"):
        assert np.any(recorded[f"{segment}/outcome"] != 0), segment
        assert np.any(recorded[f"{segment}/score"] > 0), segment
    assert len(set(recorded["scripted/hashes"])) == TICKS


def record() -> None:
    """Play the games and write the record (only with a new mode id)."""
    RECORD.parent.mkdir(exist_ok=True)
    np.savez_compressed(RECORD, **play_all())
    print(f"wrote {RECORD} ({RECORD.stat().st_size:,} bytes)")


if __name__ == "__main__":
    sys.exit(record())
