"""The fixed players of a run by System name: its frozen opponent pool and its frozen teammate,
remembered in `RUN_DIR/players.json` so a resumed or loaded run rebuilds the same trainer."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from marl_bgs import ConfigError, Policy
from marl_bgs_eval import EvalError, get_system

PLAYERS_FILE = "players.json"


def named_policy(name: str, field: str) -> Policy:
    """A System by name as a fixed player (it must run in JAX, not on the host)."""
    try:
        system = get_system(name)
    except EvalError as err:
        raise ConfigError(f"{field}: {err}") from None
    if system.host:
        raise ConfigError(f"{field}: {name!r} runs on the host; fixed players must be JAX Systems")
    bound = system.bind(system.params)  # a checkpoint's weights as constants of the policy
    return Policy(name=bound.name, act=bound.act, init=bound.init)


def save_players(run_dir: str | Path, frozen: Sequence[str], teammate: str | None) -> None:
    """Remember the run's fixed players by name."""
    data = {"frozen": list(frozen), "teammate": teammate}
    (Path(run_dir) / PLAYERS_FILE).write_text(json.dumps(data) + "\n")


def load_players(run_dir: str | Path) -> tuple[list[Policy], Policy | None]:
    """The run's frozen pool and teammate (none when the run has no players file)."""
    path = Path(run_dir) / PLAYERS_FILE
    if not path.exists():
        return [], None
    try:
        data = json.loads(path.read_text())
        frozen, teammate = data["frozen"], data["teammate"]
        if not isinstance(frozen, list) or not all(isinstance(n, str) for n in frozen):
            raise TypeError("frozen: expected a list of System names")
        if teammate is not None and not isinstance(teammate, str):
            raise TypeError("teammate: expected a System name or null")
    except (ValueError, TypeError, KeyError) as err:
        raise ConfigError(f"run_dir: {path} is not a valid players file ({err})") from None
    pool = [named_policy(n, "frozen") for n in frozen]
    return pool, (named_policy(teammate, "teammate") if teammate is not None else None)
