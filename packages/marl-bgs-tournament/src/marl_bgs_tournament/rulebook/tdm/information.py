"""Team Deathmatch's information limits: the perturbation test (the rulebook's docstring). Hidden
enemy units change; a System's inputs, actions and memory must not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs import GameState
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.perception import perceive
from marl_bgs_eval import System
from marl_bgs_tournament.rulebook import recording
from marl_bgs_tournament.rulebook.limits import GAMES, TICKS, Row
from marl_bgs_tournament.rulebook.recording import (
    _act_program,
    _as_system,
    _differences,
    _host,
    _init,
    _keys,
    _layouts,
    _memory_keys,
    _recording,
)

# what changes in a hidden enemy unit: nothing team A may know depends on these
PERTURBED = ("health", "cooldown", "stun", "trap", "slow_charge", "slow_hunter", "slow_poison",
             "antiheal", "freedom", "burst", "last_move", "last_ult")  # fmt: skip


def hidden_enemies(states: GameState) -> jax.Array:
    """bool [n, 10]: team B's living units that no living agent of team A sees."""
    sight = jax.vmap(perceive)(states).team_sight  # [n, observer, observed]
    u = states.units
    enemy = jnp.arange(10) >= 5
    return enemy & (u.class_id > 0) & u.alive & ~jnp.any(sight[:, :5, :], axis=1)


@jax.jit
def perturb_hidden(states: GameState, key: jax.Array) -> tuple[GameState, jax.Array]:
    """The states with every hidden enemy unit (`hidden_enemies`) given another valid health
    (5-100% of its class's maximum), cooldown, statuses and last actions, and the enemy team's
    messages redrawn: nothing team A may know changes. Also how many units were changed."""
    hidden = hidden_enemies(states)
    u = states.units
    keys = iter(jax.random.split(key, len(PERTURBED) + 1))
    shape = u.health.shape
    top = jnp.asarray(C.MAX_HEALTH)[u.class_id]
    caps = {**C.DURATION_CAPS, "last_move": 8, "last_ult": 1}
    changes = {}
    for name in PERTURBED:
        old = getattr(u, name)
        if name == "health":
            new = jax.random.uniform(next(keys), shape, old.dtype, 0.05, 1.0) * top
        else:
            new = jax.random.randint(next(keys), shape, 0, caps[name] + 1).astype(old.dtype)
        changes[name] = jnp.where(hidden, new, old)
    msgs = states.messages
    noise = jax.random.normal(next(keys), msgs.shape, msgs.dtype)
    msgs = jnp.where((jnp.arange(10) >= 5)[None, :, None], noise, msgs)
    out = states.replace(units=u.replace(**changes), messages=msgs)
    return out, jnp.sum(hidden, dtype=jnp.int32)


def information_limits(
    system: System, *, games: int = GAMES, ticks: int = TICKS, seed: int = 0
) -> Row:
    """The perturbation test (the package docstring): identical inputs, actions and memory when only
    hidden enemy units change."""
    sys = _as_system(system)
    rec = _recording(sys.mode, games, ticks, seed)
    act = _act_program(sys)
    memory = _init(sys, _memory_keys(rec))
    count, leaks, reads = 0, [], []
    for t, state in enumerate(rec.states):
        keys = _keys(sys, rec, state)
        changed, n = perturb_hidden(state, jax.random.fold_in(rec.root, 1000 + t))
        count += int(n)
        # Each state's inputs, then at once the actions on them (a side channel the tests
        # use reads the state of the latest inputs while the System acts).
        inputs = recording._team_inputs(rec.mode, state)
        out = act(sys.params, keys, memory, inputs)
        seen = _host((inputs, out))
        other_inputs = recording._team_inputs(rec.mode, changed)
        other = _host((other_inputs, act(sys.params, keys, memory, other_inputs)))
        leaks += [(t, *d) for d in _differences(seen[0], other[0])]
        reads += [(t, *d) for d in _differences(seen[1], other[1])]
        memory = out[1]
    maps = [layout.id for layout in _layouts(sys.mode)]
    what = (
        f"{count} hidden enemy units changed in {games} games x {ticks} ticks on maps "
        f"{maps[0]}-{maps[-1]}"
    )
    limit = "> 0 changed; inputs, actions and memory identical"
    if leaks:
        t, leaf, n = leaks[0]
        names = sorted({leaf for _, leaf, _ in leaks})
        return Row(
            "information_limits",
            False,
            count,
            limit,
            f"ENGINE leak: the System's TeamInputs leaf {leaf} changed in {n} games at "
            f"tick {t} when only hidden enemy units did (leaves {names[:6]}); {what}",
        )
    if reads:
        t, leaf, n = reads[0]
        part = "actions" if leaf.startswith("[0]") else f"memory {leaf.removeprefix('[1]')}"
        games_txt = f"{n} of {games} games" if n >= 0 else "shape or structure"
        return Row(
            "information_limits",
            False,
            count,
            limit,
            f"the System's {part} changed ({games_txt}, tick {t}) with the same inputs, "
            f"keys and memory when only hidden enemy units changed: it reads something "
            f"outside its permitted inputs; {what}",
        )
    if count == 0:
        return Row(
            "information_limits",
            False,
            0,
            limit,
            f"no hidden enemy unit to change: the test proves nothing; {what}",
        )
    return Row(
        "information_limits", True, count, limit, f"{what}: identical inputs, actions and memory"
    )
