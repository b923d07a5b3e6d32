"""Combat rewards for Team Deathmatch (paper Table S9) and reward shaping.

A reward function has the engine's signature `(state, next_state, facts) -> float32 [10]` for ONE
game (the env vmaps it): one value per absolute slot (0-4 team A, 5-9 team B), each team scored
from its own side. Use one with `marl_bgs.make("tdm", ..., reward_fn=combat_reward())`.

    from marl_bgs_train.rewards import combat_reward, health_potential, potential_shaping, shaped

    reward_fn = shaped(combat_reward("team"), potential_shaping(health_potential(0.1), 0.99))

Every factory returns a frozen dataclass that is callable: equal arguments give equal (and
equally hashed) reward functions, so the env's compiled step program, keyed on the reward
function, is reused rather than recompiled.

The combat reward's terms (amounts are the fields of `CombatRewardWeights`):

own terms, each agent's own
    `kill_credit`    per enemy death, to each agent whose damage landed on the enemy on the tick
                     it died, and to each agent whose useful healing reached one of those
                     attackers on that tick (under the class table only Priests heal); an agent
                     is credited at most once per death;
    `red_zone_kill`  more, to the same agents, when that enemy died in its own Red Zone;
    `damage`         per point of damage dealt to enemies, capped at the victim's health;
    `useful_healing` per point of useful healing given to teammates (`Facts.useful_healing`);
    `own_red_zone`   per tick spent alive in one's own Red Zone (`Facts.in_red_zone`);
shared terms, paid alike to every agent of the team
    `teammate_death` per death of a teammate (the dead agent included);
    `red_zone_death` more, per teammate who died in its own Red Zone;
    `healing_range`  per (living Priest, living teammate) pair within the Priest's Basic range at
                     the start of the tick, neither in its own Red Zone (two Priests in range of
                     each other are two pairs).

In the agent form an agent gets its team's shared terms plus its own terms; in the team form
every agent of a team gets the shared terms plus the team's total of its agents' own terms. The
official result (`marl_bgs.tdm.lifecycle.terminal_reward`: +1 win, -1 loss, 0 draw, on the last
tick) is added in both forms unless `result=False`. Padded slots (no class) get 0 from every
term, and a game that had already ended at the start of the tick gets 0 from every term.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal

import jax.numpy as jnp
import numpy as np

from marl_bgs import ConfigError
from marl_bgs.core.arena import MAP_HEIGHT, MAP_WIDTH
from marl_bgs.core.checks import check_bool, check_float, shown
from marl_bgs.core.geometry import length
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import NUM_SLOTS, ONGOING, TEAM_SIZE
from marl_bgs.tdm.facts import Facts
from marl_bgs.tdm.lifecycle import in_own_red_zone, terminal_reward
from marl_bgs.tdm.state import GameState
from marl_bgs.tdm.tables import SAME_TEAM, SLOT_TEAM, lookup

__all__ = [
    "FORMS",
    "OWN_TERMS",
    "SHARED_TERMS",
    "CombatRewardWeights",
    "RewardFn",
    "Shaper",
    "approach_potential",
    "combat_reward",
    "health_potential",
    "potential_shaping",
    "reward_terms",
    "score_shaping",
    "shaped",
]

RewardFn = Callable[[GameState, GameState, Facts], jnp.ndarray]  # one game -> float32 [10]
Shaper = RewardFn  # a term added to a base reward, same signature
Potential = Callable[[GameState], jnp.ndarray]  # one game's state -> float32 [10]

FORMS = ("agent", "team")
OWN_TERMS = ("kill_credit", "red_zone_kill", "damage", "useful_healing", "own_red_zone")
SHARED_TERMS = ("teammate_death", "red_zone_death", "healing_range")


def _finite(value: Any, field: str) -> float:
    """`value` as a finite Python float; ConfigError naming `field` otherwise."""
    return check_float(value, field)


@dataclass(frozen=True)
class CombatRewardWeights:
    """The amounts of the combat reward (paper Table S9), added per event; penalties negative.

    kill_credit: +0.05 per enemy death credited to the agent (damage on the death tick, or
        useful healing of such an attacker on that tick).
    red_zone_kill: +0.10 more per credited enemy death in that enemy's own Red Zone.
    damage: +0.001 per point of damage dealt (overkill does not pay).
    useful_healing: +0.001 per point of useful healing given.
    teammate_death: -0.05 per death in the team, to every agent of the team.
    red_zone_death: -0.10 more per teammate death in its own Red Zone, to every agent of the team.
    healing_range: +0.001 per (Priest, teammate) pair within the Priest's Basic range per tick,
        to every agent of the team.
    own_red_zone: -0.002 per tick an agent spends alive in its own Red Zone.

    Every field must be a finite number (ConfigError naming the field otherwise).
    """

    kill_credit: float = 0.05
    red_zone_kill: float = 0.10
    damage: float = 0.001
    useful_healing: float = 0.001
    teammate_death: float = -0.05
    red_zone_death: float = -0.10
    healing_range: float = 0.001
    own_red_zone: float = -0.002

    def __post_init__(self) -> None:
        for f in fields(self):
            object.__setattr__(self, f.name, _finite(getattr(self, f.name), f"weights.{f.name}"))


# --- per-slot helpers (one game, fixed shapes) ------------------------------------------------

_TEAM = SLOT_TEAM  # [10] 0 team A, 1 team B
_SAME = SAME_TEAM  # [10, 10]
_ENEMY = ~SAME_TEAM
_MATES = SAME_TEAM & ~np.eye(NUM_SLOTS, dtype=bool)  # two different teammates
_DIAGONAL = math.hypot(MAP_WIDTH, MAP_HEIGHT)


def _team_sum(x: jnp.ndarray) -> jnp.ndarray:
    """[10] per slot -> [2] per team."""
    return jnp.sum(x.reshape(2, TEAM_SIZE), axis=1)


def _own_side(per_team: jnp.ndarray) -> jnp.ndarray:
    """[2] per team -> [10]: each slot gets its own team's value."""
    return per_team[jnp.asarray(_TEAM)]


def _enemy_side(per_team: jnp.ndarray) -> jnp.ndarray:
    """[2] per team -> [10]: each slot gets the other team's value."""
    return per_team[jnp.asarray(1 - _TEAM)]


def _roster(state: GameState) -> jnp.ndarray:
    """float32 [10]: 1 for slots that hold an agent, 0 for padded slots."""
    return (state.units.class_id > 0).astype(jnp.float32)


def _distances(pos: jnp.ndarray) -> jnp.ndarray:
    """float32 [10, 10]: centre-to-centre distances between the slots' positions [10, 2]."""
    return length(pos[:, None, :] - pos[None, :, :])


def _healing_range_pairs(state: GameState) -> jnp.ndarray:
    """bool [10, 10] [Priest, teammate]: both alive at the start of the tick, neither in its own
    Red Zone (the engine's `in_own_red_zone`, as `Facts.in_red_zone`), the teammate within the
    Priest's Basic range (centre to centre, range included, as the action masks measure it)."""
    u = state.units
    alive = u.alive & (u.class_id > 0)
    home = in_own_red_zone(u.pos, state.swap, state.rules.red_zone_depth)
    ok = alive & ~home
    priest = ok & (u.class_id == C.PRIEST)
    dist = _distances(u.pos)
    in_range = dist <= lookup(C.BASIC_RANGE, u.class_id)[:, None]
    return priest[:, None] & ok[None, :] & jnp.asarray(_MATES) & in_range


def reward_terms(
    state: GameState,
    next_state: GameState,
    facts: Facts,
    weights: CombatRewardWeights | None = None,
) -> dict[str, jnp.ndarray]:
    """Each term of the combat reward per slot, float32 [10], before the form is applied.

    Keys: the own terms (`OWN_TERMS`: `kill_credit`, `red_zone_kill`, `damage`,
    `useful_healing`, `own_red_zone`), each agent's own, then the shared terms (`SHARED_TERMS`:
    `teammate_death`, `red_zone_death`, `healing_range`), already broadcast to every agent of the
    team. The result term is not included. Useful for logging.

    Damage: per victim, every attacker's damage is scaled by
    `min(1, health_before / total_damage_to_victim)` with `health_before = state.units.health` of
    the victim, so the damage paid per victim never exceeds the health it had at the start of the
    tick (healing received on the same tick is not counted toward that health).
    """
    del next_state  # every term reads the start-of-tick state and the tick's facts
    w = CombatRewardWeights() if weights is None else weights
    f32 = jnp.float32
    live = (state.outcome == ONGOING).astype(f32)
    roster = _roster(state) * live
    enemy = jnp.asarray(_ENEMY)
    same = jnp.asarray(_SAME)

    died = facts.died
    damage = jnp.where(enemy, facts.damage, 0.0)  # [attacker, victim]
    useful = jnp.where(same, facts.useful_healing, 0.0)  # [healer, recipient]

    # Kill credit: attackers who hit the victim on its death tick, and whoever healed one of them.
    kill_hits = (damage > 0) & died[None, :]  # [attacker, victim]
    healed = (useful > 0).astype(f32)  # [healer, attacker]
    helped = (healed @ kill_hits.astype(f32)) > 0  # [healer, victim]
    credited = ((kill_hits | helped) & enemy).astype(f32)  # one credit per (agent, victim)
    kills = jnp.sum(credited, axis=1)
    red_zone_kills = credited @ facts.red_zone_death.astype(f32)

    # Damage, with overkill removed per victim.
    total = jnp.sum(damage, axis=0)  # per victim
    before = state.units.health
    scale = jnp.where(total > before, before / jnp.where(total > 0, total, 1.0), 1.0)
    paid_damage = damage @ scale

    own = {
        "kill_credit": w.kill_credit * kills,
        "red_zone_kill": w.red_zone_kill * red_zone_kills,
        "damage": w.damage * paid_damage,
        "useful_healing": w.useful_healing * jnp.sum(useful, axis=1),
        "own_red_zone": w.own_red_zone * facts.in_red_zone.astype(f32),
    }

    deaths = _team_sum(died.astype(f32))
    red_zone_deaths = _team_sum((died & facts.red_zone_death).astype(f32))
    pairs = jnp.sum(_healing_range_pairs(state).astype(f32), axis=1)  # per Priest
    shared = {
        "teammate_death": w.teammate_death * _own_side(deaths),
        "red_zone_death": w.red_zone_death * _own_side(red_zone_deaths),
        "healing_range": w.healing_range * _own_side(_team_sum(pairs)),
    }
    return {k: (v * roster).astype(f32) for k, v in {**own, **shared}.items()}


# --- the combat reward ------------------------------------------------------------------------


@dataclass(frozen=True)
class _CombatReward:
    """The combat reward function; build it with `combat_reward`."""

    form: str
    weights: CombatRewardWeights
    result: bool

    def __call__(self, state: GameState, next_state: GameState, facts: Facts) -> jnp.ndarray:
        terms = reward_terms(state, next_state, facts, self.weights)
        own = sum((terms[k] for k in OWN_TERMS), jnp.zeros(NUM_SLOTS, jnp.float32))
        shared = sum((terms[k] for k in SHARED_TERMS), jnp.zeros(NUM_SLOTS, jnp.float32))
        if self.form == "team":
            own = _own_side(_team_sum(own)) * _roster(state)
        reward = own + shared
        if self.result:
            reward = reward + terminal_reward(state, next_state, facts)
        return reward.astype(jnp.float32)


def combat_reward(
    form: Literal["agent", "team"] = "agent",
    weights: CombatRewardWeights | None = None,
    result: bool = True,
) -> RewardFn:
    """The combat reward function (paper Table S9) for `marl_bgs.make(..., reward_fn=...)`.

    `form="agent"`: each agent gets its team's shared terms plus its own terms; `form="team"`:
    every agent of a team gets the shared terms plus the team's total of its agents' own terms.
    `weights`: the amounts (default `CombatRewardWeights()`). `result`: add the official +1/-1/0
    on the game's last tick. Equal arguments give equal, equally hashed functions (the env's
    compiled step is reused). A bad `form` raises `marl_bgs.ConfigError` naming it.
    """
    if not isinstance(form, str) or form not in FORMS:
        raise ConfigError(f"form: expected one of {list(FORMS)}, got {shown(form)}")
    if weights is None:
        weights = CombatRewardWeights()
    if not isinstance(weights, CombatRewardWeights):
        raise ConfigError(f"weights: expected a CombatRewardWeights, got {type(weights).__name__}")
    return _CombatReward(form=form, weights=weights, result=check_bool(result, "result"))


# --- shaping ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ScoreShaping:
    scale: float

    def __call__(self, state: GameState, next_state: GameState, facts: Facts) -> jnp.ndarray:
        points = facts.points.astype(jnp.float32)  # [2] scored this tick by team A, team B
        diff = _own_side(points) - _enemy_side(points)
        return (self.scale * diff * _roster(state)).astype(jnp.float32)


def score_shaping(scale: float) -> Shaper:
    """A shaper paying `scale * (own team's points this tick - the enemy's)` (`Facts.points`)
    to every agent of each team."""
    return _ScoreShaping(scale=_finite(scale, "scale"))


@dataclass(frozen=True)
class _HealthPotential:
    scale: float

    def __call__(self, state: GameState) -> jnp.ndarray:
        u = state.units
        roster = u.class_id > 0
        health = jnp.where(u.alive & roster, u.health, 0.0)
        max_health = jnp.where(roster, lookup(C.MAX_HEALTH, u.class_id), 0.0)
        frac = _team_sum(health) / jnp.maximum(_team_sum(max_health), 1.0)
        phi = self.scale * (_own_side(frac) - _enemy_side(frac))
        return (phi * roster).astype(jnp.float32)


def health_potential(scale: float) -> Potential:
    """A potential `state -> float32 [10]`: `scale * (own team's health fraction - the enemy's)`,
    a team's health fraction being the total health of its living agents over the total
    maximum health of its roster (padded slots get 0)."""
    return _HealthPotential(scale=_finite(scale, "scale"))


@dataclass(frozen=True)
class _ApproachPotential:
    scale: float

    def __call__(self, state: GameState) -> jnp.ndarray:
        u = state.units
        roster = u.class_id > 0
        target = u.alive & roster  # living enemies one can close in on
        dist = _distances(u.pos)
        dist = jnp.where(jnp.asarray(_ENEMY) & target[None, :], dist, jnp.inf)
        nearest = jnp.min(dist, axis=1)
        gap = jnp.where(jnp.isfinite(nearest), nearest, 0.0) / _DIAGONAL
        return (-self.scale * gap * roster).astype(jnp.float32)


def approach_potential(scale: float) -> Potential:
    """A potential `state -> float32 [10]`: `-scale * d / D` per agent, `d` the distance from the
    agent's position (living or not: a dead agent's is where it fell, until it respawns) to the
    nearest living enemy, 0 when none lives, `D` the map's diagonal. Shaping on it pays for
    closing in on the enemy; padded slots get 0."""
    return _ApproachPotential(scale=_finite(scale, "scale"))


@dataclass(frozen=True)
class _PotentialShaping:
    potential: Potential
    gamma: float

    def __call__(self, state: GameState, next_state: GameState, facts: Facts) -> jnp.ndarray:
        del facts
        after = jnp.where(next_state.outcome != ONGOING, 0.0, self.potential(next_state))
        return (self.gamma * after - self.potential(state)).astype(jnp.float32)


def potential_shaping(potential: Potential, gamma: float) -> Shaper:
    """A potential-based shaper `gamma * phi(next_state) - phi(state)`, with `phi = potential`
    (`state -> float32 [10]`); phi of a state whose game has ended (`outcome != 0`) counts as 0,
    so the shaping leaves the optimal policy unchanged. `gamma` in [0, 1]: the learner's
    discount."""
    if not callable(potential):
        raise ConfigError(f"potential: expected a callable, got {type(potential).__name__}")
    return _PotentialShaping(potential=potential, gamma=check_float(gamma, "gamma", 0.0, 1.0))


@dataclass(frozen=True)
class _Shaped:
    base: RewardFn
    shapers: tuple[Shaper, ...]

    def __call__(self, state: GameState, next_state: GameState, facts: Facts) -> jnp.ndarray:
        total = jnp.asarray(self.base(state, next_state, facts), jnp.float32)
        for shaper in self.shapers:
            total = total + shaper(state, next_state, facts)
        return total.astype(jnp.float32)


def shaped(base: RewardFn, *shapers: Shaper) -> RewardFn:
    """The reward function `base + sum(shapers)`; equal arguments give equal functions."""
    for name, fn in (("base", base), *((f"shapers[{i}]", s) for i, s in enumerate(shapers))):
        if not callable(fn):
            raise ConfigError(f"{name}: expected a callable, got {type(fn).__name__}")
    return _Shaped(base=base, shapers=tuple(shapers))
