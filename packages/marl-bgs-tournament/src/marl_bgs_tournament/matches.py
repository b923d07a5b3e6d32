"""Playing a season's pairings and recording its replays: the one code that both the service
(built-in entrants only) and the sandbox's child process (any System file) run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import jax
import pandas as pd
from jax.sharding import Mesh

import marl_bgs_eval as ev
from marl_bgs_eval import replay_files
from marl_bgs_eval.progress import note
from marl_bgs_eval.watch import Watch
from marl_bgs_tournament.errors import TournamentError

Before = Callable[[str, str, int], None]  # (system A, system B, tick limit) of the next games


def device_mesh(batch_size: int) -> Mesh | None:
    """Every visible device along the games axis, so each batch's games are split among them
    (None with one device); the batch size must divide among the devices."""
    n = jax.device_count()
    if n == 1:
        return None
    if batch_size % n:
        raise TournamentError(
            f"batch_size: {batch_size} games do not divide among the {n} visible devices"
        )
    return jax.make_mesh((n,), ("games",))


def play_pairings(
    plan: pd.DataFrame, systems: dict[str, ev.System], settings: Any, root_seed: int, *,
    watch: Watch | None = None, before: Before | None = None,
) -> pd.DataFrame:  # fmt: skip
    """Every pairing of `plan` (rows of `schedule`) through `evaluate`, one row per game. Systems
    of one architecture (System files) share the compiled programs of a pairing shape; every
    visible device plays a share of each batch (`device_mesh`), unless the moves are `watch`ed
    (the sandbox times one device). `before(a, b, tick_limit)` hears of each pairing first."""
    mesh = None if watch is not None else device_mesh(settings.batch_size)
    frames = []
    for k, row in enumerate(plan.to_dict("records")):
        a, b = str(row["system_a"]), str(row["system_b"])
        if settings.progress:
            note(f"pairing {k + 1}/{len(plan)}: {a} vs {b}")
        if before is not None:
            before(a, b, settings.tick_limit)
        frames.append(
            ev.evaluate(
                systems[a],
                systems[b],
                mode=settings.mode,
                maps=list(settings.maps),
                games_per_map=2 * settings.pairs_per_map,
                seed=root_seed,
                first_seed_number=int(row["first_seed_number"]),
                first_game=int(row["first_game"]),
                metrics=settings.metrics,
                batch_size=settings.batch_size,
                progress=settings.progress,
                **settings.rules(),
                mesh=mesh,
                watch=watch,
            )
        )
    return pd.concat(frames, ignore_index=True)


def record_replays(
    out: Path, games: pd.DataFrame, systems: dict[str, ev.System], count: int
) -> list[dict[str, Any]]:
    """The first game of the first `count` pairings, recorded, verified and saved under
    out/replays/; returns their index (replays.json's rows)."""
    (out / "replays").mkdir(exist_ok=True)
    index = []
    firsts = games.sort_values("game").groupby(["system_a", "system_b"], sort=False).head(1)
    for row in firsts.head(count).to_dict("records"):
        one = cast(pd.DataFrame, games[games["game"] == row["game"]])
        # A mode that plays team B itself names its own side as system_b: no System of ours.
        team_b = systems.get(str(row["system_b"]))
        [replay] = ev.record_games(systems[str(row["system_a"])], team_b, one)
        name = f"replays/game-{int(row['game'])}.replay.zip"
        replay_files.save(replay, out / name)
        index.append({"game": int(row["game"]), "system_a": row["system_a"],
                      "system_b": row["system_b"], "map": int(row["map"]),
                      "result": row["result"], "file": name})  # fmt: skip
    return index
