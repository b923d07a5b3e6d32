"""Which (target, Ultimate) pair each agent of a scripted team takes: every legal pair is scored
and the best one taken (no target and no Ultimate scores 0, so a pair worse than doing nothing is
never taken)."""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.core.geometry import length
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.scripted.picture import Picture
from marl_bgs.tdm.scripted.styles import Style
from marl_bgs.tdm.tables import lookup

# At or below this health an enemy is worth finishing whatever else the team wants: about one
# Basic of the hardest hitters (Rogue 12, Mage 13; x1.15 under a Mage aura). A tuned value, not
# a rule: the record in docs/opponents.md was measured with it.
FINISH = 14.0
# Below this health fraction the Priest saves an ally with Salvation.
SAVE = 0.3
# The Mage bursts when an enemy is this close (its Basic range plus a step).
BURST_REACH = C.BASIC_RANGE[C.MAGE] + 1.0


def distances(p: Picture) -> jnp.ndarray:
    """[5 agents, 10 rows] distance from each own agent to each row."""
    return length(p.pos[:TEAM_SIZE, None, :] - p.pos[None, :, :])


def melee(class_id: jnp.ndarray) -> jnp.ndarray:
    """Whether each class id fights at melee range (Warrior, Rogue)."""
    return (class_id == C.WARRIOR) | (class_id == C.ROGUE)


def threats(p: Picture) -> jnp.ndarray:
    """[10] enemy rows the team may attack: known, alive, unshielded enemies."""
    return p.enemy & p.alive & (p.shield == 0)


def priority(p: Picture, style: Style) -> jnp.ndarray:
    """[10] how much the team wants each enemy row dead (meaningless for other rows)."""
    bonus = jnp.asarray((0.0, *style.class_bonus), jnp.float32)[p.class_id]
    pri = style.low_health * (1.0 - p.frac) + bonus + (p.health <= FINISH)
    # Peel: enemies near the team's own living Priest come first.
    own_priest = (p.class_id == C.PRIEST) & p.alive & ~p.enemy
    gap = length(p.pos[:, None] - p.pos[None, :])
    pri += style.peel * jnp.any(own_priest[None, :] & (gap < 3.0), axis=1)
    # A trapped enemy is left alone (damage breaks the Trap) unless it can be finished.
    return jnp.where((p.trap > 0) & (p.health > FINISH), pri - 3.0, pri)


def choose(
    p: Picture, pair: jnp.ndarray, last_health: jnp.ndarray, style: Style
) -> tuple[jnp.ndarray, jnp.ndarray]:
    """(target [5], ultimate [5]) for the team's agents from the pair masks [5, 11, 2]."""
    cls = p.class_id[:TEAM_SIZE]
    dist = distances(p)
    pri = priority(p, style)
    mine = lambda k: (cls == k)[:, None]  # noqa: E731
    healed = p.known & (last_health >= 0) & (p.health > last_health + 0.5)
    finishing = p.health <= C.ULT_DAMAGE.max()
    ready = jnp.sum((p.cooldown[:TEAM_SIZE] == 0) & p.alive[:TEAM_SIZE])
    held = jnp.where(ready >= style.ults_together, 0.0, 3.0)  # too few Ultimates ready together
    hold = held * ~finishing  # [10]

    hurt = p.max_health - p.health
    heal = jnp.where(hurt > 3.0, 0.5 + 2.0 * (1.0 - p.frac), -1.0)  # [10]
    save = jnp.where(p.alive & (p.frac < SAVE), 5.0, -1.0)
    if style.rush:
        attack = jnp.broadcast_to(1.0 - 0.01 * dist, (TEAM_SIZE, 10))
        ult = attack + 1.0
        basic = jnp.where(p.enemy, attack, jnp.where(mine(C.PRIEST), heal, -1.0))
        targeted = jnp.where(p.enemy, ult, jnp.where(mine(C.PRIEST), save, -1.0))
        burst = jnp.ones(TEAM_SIZE)
    else:
        basic = jnp.where(p.enemy, 1.0 + pri - 0.02 * dist, jnp.where(mine(C.PRIEST), heal, -1.0))
        control = (p.stun > 0) | (p.trap > 0)
        charge = 1.6 + pri + 0.4 * (dist > C.BASIC_RANGE[C.WARRIOR] + 0.1)
        trap = 1.4 + pri + 0.6 * melee(p.class_id) - 2.0 * control
        poison = 1.2 + pri + 1.0 * healed + 0.5 * (p.frac < 0.6) - 1.0 * control
        on_enemy = jnp.where(
            mine(C.WARRIOR),
            charge,
            jnp.where(mine(C.HUNTER), trap, jnp.where(mine(C.ROGUE), poison, -1.0)),
        )
        targeted = jnp.where(p.enemy, on_enemy - hold, jnp.where(mine(C.PRIEST), save, -1.0))
        near = jnp.any(threats(p)[None, :] & (dist <= BURST_REACH), axis=1)
        burst = jnp.where(near, 2.0 - held, -1.0)
    value = jnp.zeros((TEAM_SIZE, 11, 2), jnp.float32)
    value = value.at[:, 1:, 0].set(basic).at[:, 1:, 1].set(targeted).at[:, 0, 1].set(burst)
    value = jnp.where(pair, value, -jnp.inf).at[:, 0, 0].set(0.0)
    best = jnp.argmax(value.reshape(TEAM_SIZE, -1), axis=-1)
    return (best // 2).astype(jnp.int32), (best % 2).astype(jnp.int32)


def reach(p: Picture) -> jnp.ndarray:
    """[5] each own agent's Basic range."""
    return lookup(C.BASIC_RANGE, p.class_id[:TEAM_SIZE])
