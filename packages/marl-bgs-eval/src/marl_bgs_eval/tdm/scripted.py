"""The engine's scripted Team Deathmatch teams as Systems ("tdm-alpha", "tdm-beta", "tdm-gamma",
"rush"); TDM's evaluation parts name them for `get_system` and the command line."""

from __future__ import annotations

from marl_bgs.core.checks import did_you_mean
from marl_bgs.tdm.scripted import (
    SCRIPTED,
    SHARED,
    scripted_act,
    scripted_init,
    scripted_numbers,
    scripted_policy,
)
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.systems import System, system


def _scripted(name: str) -> System:
    """TDM-Alpha, -Beta and -Gamma are parametric Systems (their style's numbers as data), so
    their pairings share compiled programs; rush plays by its own rules."""
    if name in SHARED:
        numbers = scripted_numbers(name)
        return system(scripted_act, name=name, init=scripted_init, params=numbers)
    policy = scripted_policy(name)
    return system(policy.act, name=name, init=policy.init)


SCRIPTED_SYSTEMS = {name: _scripted(name) for name in SCRIPTED}


def scripted_system(name: str) -> System:
    """The engine's scripted team `name` ("tdm-alpha", "tdm-beta", "tdm-gamma", "rush") as a
    System (the same object every call, so its compiled programs are reused)."""
    if name not in SCRIPTED_SYSTEMS:
        hint = did_you_mean(name, SCRIPTED)
        raise EvalError(f"name: unknown scripted team {name!r}{hint}; allowed: {sorted(SCRIPTED)}")
    return SCRIPTED_SYSTEMS[name]
