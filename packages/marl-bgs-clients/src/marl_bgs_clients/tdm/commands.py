"""Team Deathmatch's commands of `marl-bgs-clients` (registered through the entry-point group
`marl_bgs_clients.commands`): `watch` (two Systems play one game; also `marl-bgs-watch`), `play`
(the BattleClient) and `screenshots` (the docs' pictures)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from marl_bgs_clients.tdm.watch import watch
from marl_bgs_eval import console as ui


def register(app: typer.Typer) -> None:
    """Add Team Deathmatch's commands to the clients' command line."""
    app.command()(watch)
    app.command()(play)
    app.command()(screenshots)


def play(
    system_a: Annotated[str, typer.Argument(help="Team A's System (plays the slots you leave)")],
    system_b: Annotated[str, typer.Argument(help="Team B's System")],
    human: Annotated[list[int], typer.Option(help="A slot you play (0-4 team A, 5-9 team B)")],
    map_ref: Annotated[str, typer.Option("--map", help="Map id, name or .json file")] = "47",
    roster_a: Annotated[str, typer.Option(help="Team A's classes, e.g. MWHRP")] = "MWHRP",
    roster_b: Annotated[str, typer.Option(help="Team B's classes")] = "MWHRP",
    seed: Annotated[int, typer.Option(help="Root seed (the Systems' keys)")] = 0,
    a_right: Annotated[bool, typer.Option(help="Team A starts on the right edge")] = False,
    tick_limit: Annotated[int | None, typer.Option(help="Ticks at most (engine default)")] = None,
    oracle: Annotated[bool, typer.Option(help="Start in the Oracle view, not agent POV")] = False,
    out: Annotated[Path, typer.Option(help="Where the replay is saved")] = Path(
        "battle.replay.zip"
    ),
) -> None:  # pragma: no cover - opens a window
    """Play some slots yourself, turn-based, alongside or against any Systems."""
    from marl_bgs_clients import preflight

    preflight.play(human)  # before any heavy import: within a second
    from marl_bgs_clients.tdm.battle import BattleClient
    from marl_bgs_clients.tdm.session import HumanGame

    rules = {} if tick_limit is None else {"tick_limit": tick_limit}
    ref = ui.layout(map_ref, "tdm", files=True)
    game = HumanGame(system_a, system_b, human, ref, roster_a, roster_b, seed=seed,
                     a_right=a_right, **rules)  # fmt: skip
    BattleClient(game, out=out, oracle=oracle).run()


def screenshots(
    out: Annotated[Path, typer.Option(help="Folder for the PNGs")] = Path("docs/clients"),
) -> None:
    """Draw the pictures of docs/clients.md (a recorded game in the viewer and the client)."""
    from marl_bgs_clients.tdm.shots import draw_all

    for path in draw_all(out):
        typer.echo(str(path))
