"""Shared compiled functions, environments and state builders for the engine's tests.

Compiling is the expensive part of these tests, so every test file reuses the same few programs:
one jitted single-game tick (`tick_with_reward`), one jitted legal-action sampler, and
environments with one batch size (`NUM_ENVS`), so the batched step, views and masks compile once
per session (new maps, rosters and rule values are data and reuse them).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import UnitSpec
from marl_bgs.core.geometry import body_fits
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.actions import action_masks, sample_legal
from marl_bgs.tdm.perception import perceive, refresh_sight_lines
from marl_bgs.tdm.testing import tick_with_reward

NUM_ENVS = 4

# One compiled program for every test in the session (jax.jit caches by function).
STEP = jax.jit(tick_with_reward)


@jax.jit
def _sample_one(key: jax.Array, state: marl_bgs.GameState) -> jax.Array:
    return sample_legal(key, action_masks(state, perceive(state)))


@pytest.fixture(scope="session")
def step():
    """Jitted `tick_with_reward(state, actions[10, 3]) -> (state, reward, facts)` of one game."""
    return STEP


@pytest.fixture(scope="session")
def sample_one():
    """Jitted uniform legal actions [10, 3] of one game: `sample_one(key, state)`."""
    return _sample_one


@pytest.fixture(scope="session")
def env47():
    """The shared batched environment: map 47, default rosters, `NUM_ENVS` games."""
    return marl_bgs.make("tdm", map_id=47, num_envs=NUM_ENVS)


DOCS_PAGES = Path(__file__).resolve().parents[3] / "ci" / "docs_pages"


@pytest.fixture(scope="session")
def docs_pages():
    """`docs_pages(name)`: the repository's docs tool `ci/docs_pages/<name>.py` (outside the
    wheel), loaded once (the engine's tests run from the checkout, which holds it)."""
    loaded = {}

    def load(name: str):
        if name not in loaded:
            path = DOCS_PAGES / f"{name}.py"
            assert path.is_file(), f"{path}: the docs tool is missing from this checkout"
            spec = importlib.util.spec_from_file_location(f"docs_pages_{name}", path)
            assert spec is not None
            assert spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            loaded[name] = module
        return loaded[name]

    return load


# --- state builders -------------------------------------------------------------------------------
def random_units(
    rng: np.random.Generator, shields: bool, box=(5.6, 14.4, 1.3, 8.7), map_id: int = 47
) -> list[UnitSpec]:
    """Ten random units crowded into a box of a map (bodies fit, none overlapping), with random
    health, stuns, traps, slows, Freedom, cooldowns and (optionally) spawn shields."""
    obstacles = marl_bgs.maps.load(map_id).to_obstacles()
    cand = np.stack([rng.uniform(box[0], box[1], 400), rng.uniform(box[2], box[3], 400)], -1)
    cand = cand[np.asarray(body_fits(jnp.asarray(cand, jnp.float32), obstacles))]
    placed: list[np.ndarray] = []
    for p in cand:
        if all(np.linalg.norm(p - q) >= 1.02 for q in placed):
            placed.append(p)
        if len(placed) == 10:
            break
    assert len(placed) == 10
    units = []
    for slot, (x, y) in enumerate(placed):
        cls = "MWHRP"[int(rng.integers(5))]
        max_health = float(C.MAX_HEALTH[C.CLASS_LETTERS[cls]])
        units.append(UnitSpec(
            slot=slot, cls=cls, x=float(x), y=float(y),
            health=float(np.round(max_health * rng.uniform(0.3, 1.0), 2)),
            stun=int(rng.random() < 0.15), trap=int(rng.random() < 0.1) * 2,
            slow_charge=int(rng.integers(0, 3)), slow_hunter=int(rng.integers(0, 2)),
            slow_poison=int(rng.integers(0, 2)), freedom=int(rng.random() < 0.2),
            cooldown=int(rng.random() < 0.3) * 7,
            shield=int(rng.integers(0, 3)) if shields else 0,
        ))  # fmt: skip
    return units


TEAM_SWAP = np.array([5, 6, 7, 8, 9, 0, 1, 2, 3, 4])


def within_team_perm(rng: np.random.Generator) -> np.ndarray:
    return np.concatenate([rng.permutation(5), 5 + rng.permutation(5)])


def relabel(state: marl_bgs.GameState, perm: np.ndarray, mirror: bool) -> marl_bgs.GameState:
    """The same game of one state with its slots reordered (new slot k holds old slot perm[k]),
    optionally mirrored x -> 20 - x. A team-swapping perm moves team A's units into team B's
    slots. Every unit keeps its own frame: its spawn side flips exactly when mirrored."""
    units = jax.tree.map(lambda a: a[perm], state.units)
    if mirror:
        east_west = jnp.asarray([0, 1, 2, 4, 3, 6, 5, 8, 7])  # last moves are world-frame
        units = units.replace(
            pos=units.pos.at[:, 0].set(20.0 - units.pos[:, 0]), last_move=east_west[units.last_move]
        )
    teams_swapped = bool(perm[0] >= 5)
    swap = jnp.logical_xor(state.swap, teams_swapped != mirror)
    score = state.score[::-1] if teams_swapped else state.score
    wave = state.wave[::-1] if teams_swapped else state.wave
    return refresh_sight_lines(state.replace(units=units, swap=swap, score=score, wave=wave))


def relabel_actions(actions: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Actions [10, 3] of the relabelled game: the same choices, targets renamed to new slots."""
    inv = np.argsort(perm)
    out = np.asarray(actions)[perm].copy()
    for k in range(10):
        old_actor, t = perm[k], int(out[k, 1])
        if t == 0:
            continue
        old_team = old_actor // 5
        old_target = old_team * 5 + t - 1 if t <= 5 else (1 - old_team) * 5 + t - 6
        new_target = inv[old_target]
        out[k, 1] = 1 + new_target % 5 if new_target // 5 == k // 5 else 6 + new_target % 5
    return out


@pytest.fixture(scope="session")
def tools():
    """State builders shared by the test files (see the functions above)."""
    return SimpleNamespace(
        random_units=random_units,
        relabel=relabel,
        relabel_actions=relabel_actions,
        within_team_perm=within_team_perm,
        TEAM_SWAP=TEAM_SWAP,
    )


@pytest.fixture(scope="session")
def played(env47):
    """Batches of `NUM_ENVS` games seen during random legal play on map 47: from the spawn
    pads, and from crowded hand-built states with random statuses (where most combat is)."""
    rng = np.random.default_rng(2024)
    crowded = marl_bgs.batch_states([
        marl_bgs.author_state(map_id=47, units=random_units(rng, shields=True), tick=t,
                              swap=bool(t % 2))
        for t in range(NUM_ENVS)
    ])  # fmt: skip
    _, spawn = env47.reset(jax.random.key(5))
    out = []
    key = jax.random.key(11)
    for state, ticks in ((spawn, 3), (crowded, 9)):
        for _ in range(ticks):
            out.append(state)
            key, k_act = jax.random.split(key)
            _, state, _, _, _ = env47.step(key, state, env47.sample_actions(k_act, state))
        out.append(state)
    return out


def _eager(state: marl_bgs.GameState, actions: jax.Array):
    with jax.disable_jit():
        return tick_with_reward(state, actions)


@pytest.fixture(params=["jit", "eager"])
def run(request: pytest.FixtureRequest, step):
    """The single-game transition, jitted and un-jitted."""
    return step if request.param == "jit" else _eager


@pytest.fixture
def fuzz_outcome(record_property):
    """`check(expect, call, error=ConfigError)` for one fuzz case: `expect` a message pattern
    (the call must raise `error` matching it: outcome "error") or a predicate on the result
    (outcome "accepted"). The outcome is recorded for docs/reliability.md."""

    def check(expect, call, error=marl_bgs.ConfigError):
        if isinstance(expect, str):
            record_property("outcome", "error")
            with pytest.raises(error, match=expect):
                call()
            return None
        record_property("outcome", "accepted")
        result = call()
        assert expect(result), result
        return result

    return check


@pytest.fixture
def enough_fuzz_cases():
    """`check(cases)`: a fuzz family of (id, input, expect) cases, with `expect` a message pattern
    for a refusal, holds at least 50 refusals and 10 valid edge cases, under unique ids."""

    def check(cases):
        errors = [c for c in cases if isinstance(c[2], str)]
        assert len(errors) >= 50
        assert len(cases) - len(errors) >= 10  # valid edge cases
        assert len({c[0] for c in cases}) == len(cases)

    return check


def _case_bytes(content: object) -> bytes:
    if isinstance(content, bytes):
        return content
    return (content if isinstance(content, str) else json.dumps(content)).encode("utf-8")


@pytest.fixture
def case_bytes():
    """`case_bytes(content)`: a fuzz case's file content: bytes and str as written, anything
    else as its JSON."""
    return _case_bytes
