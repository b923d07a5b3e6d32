"""The full level: metric families in the paper's 28 topics, accumulated per tick in JAX.

A family is one measured quantity over fixed axes (slots, source>recipient pairs, abilities,
statuses); its columns are `family.label.label`, e.g. `damage_done.a0>b3.basic`. Each family's
per-tick value is read from the engine's facts for the tick and the state it started from
(statuses, positions, who is alive), plus the action masks the agents saw: no rule of the game
is worked out again here. Every value is a count of events or ticks, or an amount (HP, map units).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from marl_bgs import Facts, GameState
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import NUM_SLOTS, TEAM_SIZE
from marl_bgs.tdm.tables import absolute_target
from marl_bgs_eval.tdm.metrics import axes as ax
from marl_bgs_eval.tdm.metrics.axes import Axis


class TickRecord(NamedTuple):
    """What one tick of a batch of games offers the metrics (leading axis: games)."""

    before: GameState  # the state the tick started from
    facts: Facts
    pair_mask: jnp.ndarray  # bool [n, 10, 11, 2]: each agent's legal (target, Ultimate) pairs
    live: jnp.ndarray  # bool [n]: the game was still running when the tick started
    together: jnp.ndarray  # [n, 10]: Ultimates counted as used together this tick (`timing`)


@dataclasses.dataclass(frozen=True)
class Family:
    """A group of metric columns: one quantity over `axes`, in one topic of one section."""

    name: str
    section: str
    topic: str
    unit: str  # "HP", "map units", "ticks" or "count"
    meaning: str
    axes: tuple[Axis, ...]
    value: Callable[[TickRecord], jnp.ndarray]  # [n, *axis sizes] for one tick

    @property
    def whom(self) -> bool:
        """Whether the family records who did what to whom (it has a source>recipient axis)."""
        return any(">" in a.name for a in self.axes)


AMOUNT_UNITS = frozenset({"HP", "map units"})
DAMAGE, RESULTS, TEAMWORK, KILLS, STATUS, ULTIMATES = (
    "Damage and healing",
    "Results and actions",
    "Teamwork and positioning",
    "Kills, deaths and respawns",
    "Status effects",
    "Ultimates",
)


# --- what a tick's state and facts say, in the shapes the families need ------------------------


def _alive(t: TickRecord) -> jnp.ndarray:
    """[n, 10] alive (and in a running game) at the start of the tick."""
    return t.before.units.alive & t.live[:, None]


def _harm(t: TickRecord) -> jnp.ndarray:
    """[n, 10, 6] harmful effects each slot was under when the tick started (HARM order)."""
    u = t.before.units
    on = [u.stun, u.trap, u.slow_charge, u.slow_hunter, u.slow_poison, u.antiheal]
    return jnp.stack([s > 0 for s in on], axis=-1) & _alive(t)[..., None]


def _statuses(t: TickRecord) -> jnp.ndarray:
    """[n, 10, 9] every status (STATUS order) held when the tick started, by the living."""
    u = t.before.units
    on = [u.stun, u.trap, u.slow_charge, u.slow_hunter, u.slow_poison, u.antiheal, u.freedom,
          u.burst, u.shield]  # fmt: skip
    return jnp.stack([s > 0 for s in on], axis=-1) & _alive(t)[..., None]


def _is(t: TickRecord, cls: int) -> jnp.ndarray:
    return t.before.units.class_id == cls


def _useful(t: TickRecord) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Useful Basic and Ultimate healing [n, 10, 10]: each loses its recipient's excess share."""
    keep = (1.0 - t.facts.excess_share)[:, None, :]
    return t.facts.heal_basic * keep, t.facts.heal_ultimate * keep


def _useful_total(t: TickRecord) -> jnp.ndarray:
    """Useful healing of both abilities together [n, 10, 10]."""
    basic, ultimate = _useful(t)
    return basic + ultimate


def _excess(t: TickRecord) -> jnp.ndarray:
    share = t.facts.excess_share[:, None, :, None]
    return jnp.stack([t.facts.heal_basic, t.facts.heal_ultimate], axis=-1) * share


def _hits(t: TickRecord) -> jnp.ndarray:
    """bool [n, 10, 10]: the source's damage landed on the recipient."""
    return t.facts.damage > 0


def _kill_hits(t: TickRecord) -> jnp.ndarray:
    """bool [n, 10, 10]: the source hit the recipient on the tick it died."""
    return _hits(t) & t.facts.died[:, None, :]


def _heal_helped(t: TickRecord) -> jnp.ndarray:
    """bool [n, healer, victim]: the healer's useful healing reached an ally who hit the victim
    on the tick it died (Table S9's kill credit for healers)."""
    b, u = _useful(t)
    healed = (b + u > 0).astype(jnp.float32)
    return jnp.einsum("nha,nav->nhv", healed, _kill_hits(t).astype(jnp.float32)) > 0


def _helpers(t: TickRecord) -> jnp.ndarray:
    """[n, 10] per victim: how many agents dealt damage to it or healed one who did, on the
    tick it died."""
    return jnp.sum(_kill_hits(t) | _heal_helped(t), axis=1)


def _by_killers(per_victim: jnp.ndarray, t: TickRecord) -> jnp.ndarray:
    """[n, 10, ...] per victim (zero unless it died) -> [n, 2, ...] per killing team."""
    died = t.facts.died.reshape(*t.facts.died.shape, *(1,) * (per_victim.ndim - 2))
    return ax.per_team(per_victim * died)[:, ::-1]


def _targets(t: TickRecord) -> jnp.ndarray:
    """bool [n, 10, 10]: each agent's accepted target slot."""
    slot = jax.vmap(absolute_target)(t.facts.accepted[..., 1])
    return slot[..., None] == jnp.arange(NUM_SLOTS)


def _distances(t: TickRecord) -> jnp.ndarray:
    pos = t.before.units.pos
    return jnp.sqrt(jnp.sum((pos[:, :, None] - pos[:, None]) ** 2, axis=-1))


def _mates_alive(t: TickRecord) -> jnp.ndarray:
    """bool [n, 10, 10]: two different teammates, both alive."""
    alive = _alive(t)
    return alive[:, :, None] & alive[:, None, :] & jnp.asarray(ax.MATES)


def _nearest_mate(t: TickRecord) -> jnp.ndarray:
    both = _mates_alive(t)
    near = jnp.min(jnp.where(both, _distances(t), jnp.inf), axis=-1)
    return jnp.where(jnp.any(both, axis=-1), near, 0.0)


def _result(t: TickRecord) -> jnp.ndarray:
    f = t.facts
    deaths = ax.per_team(f.died.astype(jnp.int32))
    score = t.before.score + f.points
    ahead = (score > score[:, ::-1]) & t.live[:, None]
    return jnp.stack([f.points, deaths[:, ::-1], deaths, ahead], axis=-1)


def _coordination(t: TickRecord) -> jnp.ndarray:
    hits = _hits(t)
    attackers = ax.per_team(jnp.any(hits, axis=2).astype(jnp.int32))
    per_target = hits.reshape(hits.shape[0], 2, TEAM_SIZE, NUM_SLOTS).sum(axis=2)
    focus = jnp.any(per_target >= 2, axis=-1)
    return jnp.stack([attackers >= 2, focus], axis=-1)


def _setups(t: TickRecord) -> jnp.ndarray:
    """[n, 10, 6] per victim (SETUP order): what helped the kill on its killing tick."""
    f, u = t.facts, t.before.units
    warrior = _is(t, C.WARRIOR)[:, :, None]
    charged = jnp.any(warrior & (f.damage_ultimate > 0), axis=1) | (u.slow_charge > 0)
    warrior_basic = jnp.any(warrior & (f.damage_basic > 0), axis=1)
    return jnp.stack(
        [_helpers(t) >= 2, charged, warrior_basic, u.slow_hunter > 0, u.trap > 0,
         u.antiheal > 0],
        axis=-1,
    )  # fmt: skip


def _helper_counts(t: TickRecord) -> jnp.ndarray:
    return _helpers(t)[..., None] == jnp.arange(1, TEAM_SIZE + 1)


def _auras(t: TickRecord) -> jnp.ndarray:
    f = t.facts
    kinds = [f.mage_auras == 1, f.mage_auras == 2, f.warrior_auras == 1, f.warrior_auras == 2]
    return jnp.stack(kinds, axis=-1).reshape(*f.mage_auras.shape, 2, 2)


def _aura_totals(t: TickRecord) -> jnp.ndarray:
    f = t.facts
    added = ax.per_team(jnp.sum(f.mage_aura_added, axis=2))
    prevented = ax.per_team(jnp.sum(f.warrior_aura_prevented, axis=1))
    return jnp.stack([added, prevented], axis=-1)


def _burst(t: TickRecord) -> jnp.ndarray:
    pressed = t.facts.ultimate_used & _is(t, C.MAGE)
    enemy_basic = jnp.any(t.pair_mask[:, :, 1 + TEAM_SIZE :, 0], axis=-1)
    active = (t.before.units.burst > 0) & _alive(t)
    return jnp.stack([pressed, pressed & enemy_basic, active], axis=-1)


def _charge_distance(t: TickRecord) -> jnp.ndarray:
    f = t.facts
    moved = jnp.sqrt(jnp.sum((f.charge_to - f.charge_from) ** 2, axis=-1))
    return moved * (f.ultimate_used & _is(t, C.WARRIOR))


def _stack(*xs: jnp.ndarray) -> jnp.ndarray:
    return jnp.stack(xs, axis=-1)


KIND = lambda *labels: Axis("kind", labels)  # noqa: E731 - a small labelled axis
F = Family
FAMILIES: tuple[Family, ...] = (
    # Damage and healing
    F("damage_done", DAMAGE, "Damage done", "HP", "damage dealt",
      (ax.ENEMY_PAIR, ax.ABILITY),
      lambda t: ax.enemy_pairs(_stack(t.facts.damage_basic, t.facts.damage_ultimate))),
    F("damage_received", DAMAGE, "Damage received", "HP", "damage taken", (ax.SLOT, ax.ABILITY),
      lambda t: _stack(t.facts.damage_basic.sum(1), t.facts.damage_ultimate.sum(1))),
    F("damage_to_affected", DAMAGE, "Damage to enemies under a harmful effect", "HP",
      "damage dealt to an enemy under the effect", (ax.ENEMY_PAIR, ax.HARM),
      lambda t: ax.enemy_pairs(t.facts.damage[..., None] * _harm(t)[:, None])),
    F("healing_done", DAMAGE, "Healing done", "HP", "useful healing given (raised health)",
      (ax.ALLY_PAIR, ax.ABILITY), lambda t: ax.ally_pairs(_stack(*_useful(t)))),
    F("healing_received", DAMAGE, "Healing received", "HP", "useful healing received",
      (ax.SLOT, ax.ABILITY), lambda t: _stack(*(h.sum(1) for h in _useful(t)))),
    F("regeneration", DAMAGE, "Healing received", "HP", "out-of-combat regeneration received",
      (ax.SLOT,), lambda t: t.facts.regen),
    F("excess_healing", DAMAGE, "Excess healing", "HP", "healing lost to full health",
      (ax.ALLY_PAIR, ax.ABILITY), lambda t: ax.ally_pairs(_excess(t))),
    F("healing_to_affected", DAMAGE, "Healing to allies under a harmful effect", "HP",
      "useful healing given to an ally under the effect", (ax.ALLY_PAIR, ax.HARM),
      lambda t: ax.ally_pairs(_useful_total(t)[..., None] * _harm(t)[:, None])),
    F("healing_saves", DAMAGE, "Priest healing saves", "count",
      "heals to an ally who would have died without the tick's healing", (ax.ALLY_PAIR,),
      lambda t: ax.ally_pairs((t.facts.healing > 0) & t.facts.saved[:, None, :])),
    # Results and actions
    F("results", RESULTS, "Episode results", "count",
      "points scored, kills, deaths, and ticks ending with the team ahead", (ax.TEAM, ax.RESULT),
      _result),
    F("basics_on_enemies", RESULTS, "Ability activations", "count", "Basics used on an enemy",
      (ax.ENEMY_PAIR,),
      lambda t: ax.enemy_pairs(_targets(t) & t.facts.basic_used[..., None])),
    F("basics_on_allies", RESULTS, "Ability activations", "count",
      "Basics used on an ally or oneself", (ax.ALLY_PAIR,),
      lambda t: ax.ally_pairs(_targets(t) & t.facts.basic_used[..., None])),
    F("ultimates_on_enemies", RESULTS, "Ability activations", "count",
      "targeted Ultimates used on an enemy", (ax.ENEMY_PAIR,),
      lambda t: ax.enemy_pairs(_targets(t) & t.facts.ultimate_used[..., None])),
    F("ultimates_on_allies", RESULTS, "Ability activations", "count",
      "targeted Ultimates used on an ally or oneself", (ax.ALLY_PAIR,),
      lambda t: ax.ally_pairs(_targets(t) & t.facts.ultimate_used[..., None])),
    F("ultimates_untargeted", RESULTS, "Ability activations", "count",
      "untargeted Ultimates used (Burst)", (ax.SLOT,),
      lambda t: t.facts.ultimate_used & (t.facts.accepted[..., 1] == 0)),
    F("moves", RESULTS, "Accepted and rejected actions", "count",
      "accepted moves while alive", (ax.SLOT, ax.MOVE),
      lambda t: (t.facts.accepted[..., 0, None] == jnp.arange(len(ax.MOVE.labels)))
      & _alive(t)[..., None]),
    F("rejected", RESULTS, "Accepted and rejected actions", "count",
      "illegal choices repaired (move to stay, pair to none)", (ax.SLOT, KIND("move", "combat")),
      lambda t: _stack(t.facts.move_rejected, t.facts.combat_rejected)),
    # Teamwork and positioning
    F("coordination", TEAMWORK, "Team coordination", "ticks",
      "ticks with two or more teammates dealing damage, and with two or more on one enemy",
      (ax.TEAM, ax.COORDINATION), _coordination),
    F("ultimates_together", TEAMWORK, "Team coordination", "count",
      "Ultimates used within 4 ticks of a teammate's", (ax.SLOT,),
      lambda t: t.together),
    F("teammate_distance", TEAMWORK, "Team formation", "map units",
      "distance between two living teammates, summed over the ticks both lived",
      (ax.MATE_PAIR,), lambda t: ax.mate_pairs(_distances(t) * _mates_alive(t))),
    F("teammate_ticks", TEAMWORK, "Team formation", "ticks", "ticks both teammates lived",
      (ax.MATE_PAIR,), lambda t: ax.mate_pairs(_mates_alive(t))),
    F("nearest_teammate", TEAMWORK, "Team formation", "map units",
      "distance to the nearest living teammate, summed over ticks", (ax.SLOT,), _nearest_mate),
    F("alive_ticks", TEAMWORK, "Team formation", "ticks", "ticks alive", (ax.SLOT,), _alive),
    F("aura_cover", TEAMWORK, "Aura coverage", "ticks",
      "ticks the source's aura (Mage or Warrior, by its class) covered the ally",
      (ax.ALLY_PAIR,), lambda t: ax.ally_pairs(t.facts.aura_cover)),
    F("aura_stack", TEAMWORK, "Aura coverage", "ticks",
      "ticks under exactly one or two auras of a kind",
      (ax.SLOT, KIND("mage", "warrior"), ax.AURAS), _auras),
    F("mage_aura_added", TEAMWORK, "Aura damage added or blocked", "HP",
      "damage the Mage's aura added to the ally's hits (an equal share per covering aura)",
      (ax.ALLY_PAIR,), lambda t: ax.ally_pairs(t.facts.mage_aura_added_by)),
    F("warrior_aura_prevented", TEAMWORK, "Aura damage added or blocked", "HP",
      "damage the Warrior's aura blocked from the ally (an equal share per covering aura)",
      (ax.ALLY_PAIR,), lambda t: ax.ally_pairs(t.facts.warrior_aura_prevented_by)),
    F("aura_totals", TEAMWORK, "Aura damage added or blocked", "HP",
      "damage the team's Mage auras added and its Warrior auras blocked",
      (ax.TEAM, KIND("added", "prevented")), _aura_totals),
    # Kills, deaths and respawns
    F("kill_hits", KILLS, "Kill contributions", "count",
      "the source dealt damage to the enemy on the tick it died", (ax.ENEMY_PAIR,),
      lambda t: ax.enemy_pairs(_kill_hits(t))),
    F("kill_heals", KILLS, "Kill contributions", "count",
      "the source's useful healing reached an ally who hit the enemy on the tick it died",
      (ax.ENEMY_PAIR,), lambda t: ax.enemy_pairs(_heal_helped(t))),
    F("kill_helpers", KILLS, "Kill contributions", "count",
      "kills by the team with exactly this many helpers (hits or heals on the killing tick)",
      (ax.TEAM, Axis("helpers", tuple(str(k) for k in range(1, TEAM_SIZE + 1)))),
      lambda t: _by_killers(_helper_counts(t), t)),
    F("kill_setups", KILLS, "Kill contributions", "count",
      "kills by the team with this help on the killing tick", (ax.TEAM, ax.SETUP),
      lambda t: _by_killers(_setups(t), t)),
    F("kills_of_affected", KILLS, "Kills of enemies under a harmful effect", "count",
      "the source hit the enemy on the tick it died while the enemy was under the effect",
      (ax.ENEMY_PAIR, ax.HARM),
      lambda t: ax.enemy_pairs(_kill_hits(t)[..., None] & _harm(t)[:, None])),
    F("deaths", KILLS, "Deaths and time dead", "count", "deaths", (ax.SLOT,),
      lambda t: t.facts.died),
    F("dead_ticks", KILLS, "Deaths and time dead", "ticks", "ticks spent dead", (ax.SLOT,),
      lambda t: ~t.before.units.alive & (t.before.units.class_id > 0) & t.live[:, None]),
    F("respawns", KILLS, "Respawning", "count", "respawns", (ax.TEAM,),
      lambda t: ax.per_team(t.facts.respawned.astype(jnp.int32))),
    F("shield_cleared", KILLS, "Respawning", "count",
      "bodies moved clear as a spawn shield ended", (ax.TEAM,),
      lambda t: ax.per_team(t.facts.shield_cleared.astype(jnp.int32))),
    F("red_zone", KILLS, "Red Zone", "count",
      "deaths in one's own Red Zone, and ticks alive in it", (ax.SLOT, KIND("deaths", "ticks")),
      lambda t: _stack(t.facts.red_zone_death, t.facts.in_red_zone)),
    F("red_zone_kill_hits", KILLS, "Red Zone", "count",
      "the source hit the enemy on the tick it died in its own Red Zone", (ax.ENEMY_PAIR,),
      lambda t: ax.enemy_pairs(_hits(t) & t.facts.red_zone_death[:, None, :])),
    # Status effects
    F("applied", STATUS, "Status applications", "count", "statuses applied to an enemy",
      (ax.ENEMY_PAIR, ax.APPLIED),
      lambda t: ax.enemy_pairs(_stack(t.facts.stunned, t.facts.trapped, t.facts.slowed_charge,
                                      t.facts.slowed_hunter, t.facts.poisoned))),
    F("freedom_given", STATUS, "Status applications", "count",
      "Blessings of Freedom given to an ally or oneself", (ax.ALLY_PAIR,),
      lambda t: ax.ally_pairs(t.facts.freed)),
    F("status_ticks", STATUS, "Time with status effects", "ticks",
      "ticks alive under the status", (ax.SLOT, ax.STATUS), _statuses),
    F("freedom_on_slowed", STATUS, "Freedom against slows", "count",
      "Blessings of Freedom given to a slowed ally", (ax.ALLY_PAIR,),
      lambda t: ax.ally_pairs(t.facts.freed & (_harm(t)[..., 2:5].any(-1))[:, None, :])),
    F("freed_slow_ticks", STATUS, "Freedom against slows", "ticks",
      "ticks slowed while Freedom held", (ax.SLOT,),
      lambda t: _harm(t)[..., 2:5].any(-1) & (t.before.units.freedom > 0)),
    # Ultimates
    F("burst", ULTIMATES, "Mage Burst", "count",
      "Bursts pressed, pressed with an enemy in Basic reach, and ticks Burst was held",
      (ax.SLOT, KIND("pressed", "enemy_in_reach", "held_ticks")), _burst),
    F("burst_damage", ULTIMATES, "Mage Burst", "HP", "damage dealt while Burst multiplied it",
      (ax.ENEMY_PAIR,),
      lambda t: ax.enemy_pairs(t.facts.damage * t.facts.burst_active[..., None])),
    F("charge_distance", ULTIMATES, "Warrior Charge", "map units",
      "distance covered by Charges", (ax.SLOT,), _charge_distance),
    F("trap_broken_by", ULTIMATES, "Hunter Trap", "count",
      "Traps the source's damage broke", (ax.ENEMY_PAIR,),
      lambda t: ax.enemy_pairs(t.facts.trap_broken_by)),
    F("antiheal_healing", ULTIMATES, "Rogue Poison", "HP",
      "useful healing received while Poison halved it", (ax.SLOT,),
      lambda t: _useful_total(t).sum(1) * (t.before.units.antiheal > 0)),
    F("salvation_saves", ULTIMATES, "Priest Ultimate", "count",
      "allies saved from death by the Priest's Ultimate", (ax.SLOT,),
      lambda t: jnp.sum((t.facts.heal_ultimate > 0) & t.facts.saved[:, None, :], axis=-1)),
)  # fmt: skip


def _labels(f: Family) -> itertools.product[tuple[str, ...]]:
    return itertools.product(*(a.labels for a in f.axes))


def columns(f: Family) -> list[str]:
    """The family's column names, in the order its values are flattened."""
    return [
        ".".join((f.name, *labels)) for labels in itertools.product(*(a.labels for a in f.axes))
    ]


def meanings(f: Family) -> list[str]:
    """One line per column: the family's meaning and the column's place on each axis."""
    return [
        f"{f.meaning} [{', '.join(f'{a.name} {x}' for a, x in zip(f.axes, labels, strict=True))}]"
        for labels in _labels(f)
    ]


def values(t: TickRecord) -> jnp.ndarray:
    """float32 [n, full width]: every family's value for one tick, flattened in column order."""
    n = t.live.shape[0]
    return jnp.concatenate(
        [f.value(t).reshape(n, -1).astype(jnp.float32) for f in FAMILIES], axis=-1
    )
