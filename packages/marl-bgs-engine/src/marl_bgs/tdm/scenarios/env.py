"""Scenario environments: a scenario is a start-state pool entry, its controller folded in.

    env = marl_bgs.make_scenario(6, num_envs=256)   # an OpponentEnv: team A's agents
    obs, state = env.reset(key)                             # every game starts from scenario 6

Side 0 is the snapshot as designed (team A spawned on the left); side 1 is its mirror image (team
A on the right), which every agent sees identically in its own frame. `spawn_swap` picks sides
as in any env (default "none": the snapshot as designed).
"""

from __future__ import annotations

import inspect
from functools import cache
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.checks import check_bool, check_int
from marl_bgs.core.env import RewardFn
from marl_bgs.core.opponent import OpponentEnv
from marl_bgs.core.pool import StartPool, check_spawn_swap, make_pool
from marl_bgs.core.pytree import batch_states
from marl_bgs.core.team import Policy, TeamInputs, TeamPolicy, team_step
from marl_bgs.tdm.classes import class_id
from marl_bgs.tdm.config import RuleValues
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.mode import TDMEnv, TeamDeathmatch, make_tdm
from marl_bgs.tdm.scenarios.files import (
    MAX_LINES,
    MAX_TICKS_LEFT,
    MAX_VARIANTS,
    Scenario,
    ScenarioError,
    load,
)
from marl_bgs.tdm.scripted import scripted_policy

MAX_TICKS = MAX_TICKS_LEFT  # plans are padded to this many ticks (one program for every scenario)
# A batch that holds every line and variant of any scenario: replaying them all at this size
# compiles one program per controller.
REPLAY_BATCH = MAX_LINES + MAX_VARIANTS


def scenario_pool(scenario: Scenario) -> StartPool:
    """One entry: the snapshot (side 0) and its mirror image with team A on the right (side 1)."""
    states = [scenario.state(RuleValues(), mirrored=m) for m in (False, True)]
    return make_pool(batch_states(states[:1]), batch_states(states[1:]))


def scenario_two_team_env(
    scenario: Any, *, num_envs: int = 1, spawn_swap: str = "none", shared_sight: bool = True,
    reward_fn: RewardFn | None = None, mesh: Any = None, mesh_axis: str | None = None,
) -> TDMEnv:  # fmt: skip
    """Both teams' env over one scenario (evaluation plays team B with the scenario's opponent).
    Scenario games carry no teammate messages."""
    sc = load(scenario)
    spawn_swap = check_spawn_swap(spawn_swap, ScenarioError)
    mode = TeamDeathmatch(shared_sight=check_bool(shared_sight, "shared_sight"))
    classes = np.zeros((1, 10), np.int32)
    for u in sc.units:
        classes[0, u.slot] = class_id(u.cls, "cls")
    return TDMEnv(
        mode, scenario_pool(sc), maps=[sc.arena], rosters=classes,
        rule_values=RuleValues(), num_envs=num_envs, spawn_swap=spawn_swap,
        reward_fn=reward_fn, mesh=mesh, mesh_axis=mesh_axis,
    )  # fmt: skip


@cache
def opponent_policy(name: str) -> Policy:
    """The scripted controller `name`, one object per name (so programs are shared)."""
    return scripted_policy(name)


def make_scenario(
    scenario: int | str | Path | Scenario,
    *,
    num_envs: int = 1,
    spawn_swap: str = "none",
    shared_sight: bool = True,
    reward_fn: RewardFn | None = None,
    mesh: Any = None,
    mesh_axis: str | None = None,
    **unknown: Any,
) -> OpponentEnv:
    """Team A's env over `scenario` (an id 1-8, a name, a file or a `Scenario`), its controller
    folded in as team B: `reset`/`step` take and return team A's agents only.

    The scenario fixes the arena, units, score, clock and rule values, so the only settings are
    the batch (`num_envs`, `mesh`, `mesh_axis`), `spawn_swap` ("none": the snapshot as designed),
    `shared_sight` and `reward_fn`; any other keyword is a `ScenarioError` naming it.
    """
    if unknown:
        allowed = list(inspect.signature(make_scenario).parameters)[1:-1]
        raise ScenarioError(
            f"{next(iter(unknown))[:60]}: not a setting of a scenario env (the scenario fixes its "
            f"arena, units, score, clock and rule values); allowed {allowed}"
        )
    sc = load(scenario)
    env = scenario_two_team_env(
        sc, num_envs=num_envs, spawn_swap=spawn_swap, shared_sight=shared_sight,
        reward_fn=reward_fn, mesh=mesh, mesh_axis=mesh_axis,
    )  # fmt: skip
    return OpponentEnv(env, opponent_policy(sc.opponent), 0)


def _plan_policy() -> Policy:
    """Team A replays a fixed plan: memory (plan int32 [T, 5, 3], next tick []) per game."""

    def act(keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple[jax.Array, Any]:
        del keys, inputs
        plan, t = memory
        actions = plan[jnp.arange(plan.shape[0]), jnp.minimum(t, plan.shape[1] - 1)]
        return actions, (plan, t + 1)

    return Policy(name="plan", act=act)


PLAN = _plan_policy()


def padded_plans(plans: Any) -> np.ndarray:
    """Team A plans [n, T<=MAX_TICKS, 5, 3] padded with (stay, none) to [n, MAX_TICKS, 5, 3]."""
    plans = np.asarray(plans, np.int32)
    if plans.ndim != 4 or plans.shape[1] > MAX_TICKS or plans.shape[2:] != (TEAM_SIZE, 3):
        raise ScenarioError(f"plans: expected shape [n, <= {MAX_TICKS}, 5, 3], got {plans.shape}")
    out = np.zeros((plans.shape[0], MAX_TICKS, TEAM_SIZE, 3), np.int32)
    out[:, : plans.shape[1]] = plans
    return out


@cache
def _runner(num_envs: int, team_a: TeamPolicy, opponent: TeamPolicy) -> Any:
    # The state carries everything a game is (arena, units, rules): any env of this mode and
    # batch size steps it, so one program serves every scenario.
    step = team_step(make_tdm(num_envs=num_envs), [team_a, opponent])

    @jax.jit
    def run(key: jax.Array, state: Any, memories: Any) -> Any:
        def tick(carry: Any, k: jax.Array) -> Any:
            state, memories = carry
            ka, kb = jax.random.split(k)
            out = step(state, memories, [jax.random.split(ka, num_envs),
                                         jax.random.split(kb, num_envs)])  # fmt: skip
            return (out.state, out.memories), (out.state.outcome, out.state.score, out.actions)

        keys = jax.random.split(key, MAX_TICKS)
        return jax.lax.scan(tick, (state, memories), keys)[1]

    return run


def play(
    scenario: Any, team_a: TeamPolicy | None = None, *, plans: Any = None, num_envs: int = 1,
    key: jax.Array | None = None, mirrored: bool = False,
) -> dict[str, np.ndarray]:  # fmt: skip
    """Play `scenario` to its end: team A is `team_a` (a team policy) or replays `plans`
    ([n, T, 5, 3], own frame); team B is the scenario's controller. Returns numpy arrays per
    tick [MAX_TICKS, n]: `outcome` (0 running, 1 A wins, 2 B wins, 3 draw), `score` [.., 2] and
    `actions` [.., 10, 3] as played (own frames); `mirrored`: from the mirror image."""
    sc = load(scenario)
    key = jax.random.key(0) if key is None else key
    if (team_a is None) == (plans is None):
        raise ScenarioError("team_a, plans: give exactly one (a team policy, or team A's plans)")
    policy: TeamPolicy = PLAN if team_a is None else team_a
    if plans is not None:
        plans = padded_plans(plans)
        num_envs = plans.shape[0]
    num_envs = check_int(num_envs, "num_envs", 1, 2**20)
    pool = scenario_pool(sc)
    state = jax.tree.map(lambda a: jnp.repeat(a[:, int(mirrored)], num_envs, axis=0), pool.states)
    opponent = opponent_policy(sc.opponent)
    k_a, k_b, k_run = jax.random.split(key, 3)
    mem_a = jax.vmap(policy.init)(jax.random.split(k_a, num_envs))
    if plans is not None:
        mem_a = (jnp.asarray(plans), jnp.zeros(num_envs, jnp.int32))
    mem_b = jax.vmap(opponent.init)(jax.random.split(k_b, num_envs))
    outcome, score, actions = _runner(num_envs, policy, opponent)(k_run, state, (mem_a, mem_b))
    return {"outcome": np.asarray(outcome), "score": np.asarray(score),
            "actions": np.asarray(actions)}  # fmt: skip
