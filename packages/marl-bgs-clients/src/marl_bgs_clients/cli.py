"""`marl-bgs-clients`: open the Replay Viewer, play in the BattleClient, watch two Systems, or
draw the docs' screenshots.

    marl-bgs-clients view game.replay.zip
    marl-bgs-clients play tdm-alpha tdm-beta --human 0 --map 47 --out mine.replay.zip
    marl-bgs-clients watch tdm-alpha tdm-beta --map 47 --gif game.gif   # = marl-bgs-watch
    marl-bgs-clients screenshots --out docs/clients
    marl-bgs-clients export game.replay.zip --out game.gif            # any mode's replay
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from marl_bgs_clients.watch import ERRORS, watch
from marl_bgs_eval import console as ui

app = ui.App("marl-bgs-clients", errors=ERRORS, add_completion=False, no_args_is_help=True,
             help="MARL-BattleGrounds clients: BattleClient and Replay Viewer.")  # fmt: skip
app.command()(watch)


@app.command(name="two-bridge", hidden=True, context_settings={
    "allow_extra_args": True, "ignore_unknown_options": True})  # fmt: skip
def two_bridge() -> None:
    """Gone: Two-Bridge replays open like every mode's (`view`, `export`)."""

    ui.fail(
        "`marl-bgs-clients two-bridge` is gone: record an episode replay "
        "(marl_bgs_eval.episode_replays.record, then save), then `marl-bgs-clients export "
        "FILE --out game.gif` writes the GIF and `marl-bgs-clients view FILE` opens it"
    )


@app.command()
def view(
    path: Annotated[Path, typer.Argument(help="A replay file of any mode (.replay.zip)")],
    pov: Annotated[int | None, typer.Option(help="Start in slot 0-9's POV")] = None,
) -> None:
    """Open a replay of any mode in the Replay Viewer (a file that fails the checks, or no
    display, is one line on stderr and exit code 2)."""
    from marl_bgs_clients import preflight

    preflight.view(path, pov)  # before any heavy import: within a second
    viewer = _opened(path, pov)
    viewer.run()  # pragma: no cover - opens a window


@app.command()
def export(
    path: Annotated[Path, typer.Argument(help="A replay file of any mode (.replay.zip)")],
    out: Annotated[Path, typer.Option(help="The game as .gif or .mp4, or one tick as .png")],
    pov: Annotated[int | None, typer.Option(help="Slot 0-9's POV (modes with agent views)")] = None,
    tick: Annotated[
        int | None, typer.Option(min=0, help="The tick of a .png (default: last)")
    ] = None,
    fps: Annotated[float, typer.Option(min=0.5, max=60, help="Frames per second")] = 4.0,
) -> None:
    """Draw a replay of any mode without a window: the whole game as a GIF or MP4 (the key
    below each frame), or one tick as a PNG, as the Replay Viewer shows it."""
    from marl_bgs_clients import preflight

    preflight.export(path, pov, out)  # before any heavy import: within a second
    viewer = _opened(path, pov)
    try:
        if out.suffix.lower() == ".png":
            viewer.jump(viewer.replay.ticks if tick is None else tick)  # type: ignore[union-attr]
            written = viewer.export_frame(out)
        else:
            written = viewer.export_clip(out.suffix.lower(), out, fps)
    except Exception as err:  # an unwritable path, a failed encoder: one line
        ui.fail(f"--out: cannot write {out}: {err}")
    typer.echo(f"{written}: {viewer.replay.ticks} ticks of {viewer.replay.header['mode']}")  # type: ignore[union-attr]


def _opened(path: Path, pov: int | None) -> Any:
    """A Replay Viewer on the file at `path` in slot `pov`'s view, or one line and exit 2."""
    from marl_bgs_clients.modes import drawing
    from marl_bgs_clients.viewer import ReplayViewer
    from marl_bgs_eval import replay_files

    try:
        replay = replay_files.load(path)
        drawing(replay)
    except Exception as err:  # every refusal of the replay checks, whatever its kind
        ui.fail(f"cannot open {path}: {err}")
    viewer = ReplayViewer(replay, name=path.name, out_dir=path.parent)
    if pov is not None and pov >= viewer.part.agents:
        ui.fail(f"--pov: {replay.header['mode']} has no agent view {pov}")
    viewer.observer = viewer.selected = pov
    return viewer


@app.command()
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


@app.command()
def screenshots(
    out: Annotated[Path, typer.Option(help="Folder for the PNGs")] = Path("docs/clients"),
) -> None:
    """Draw the pictures of docs/clients.md (a recorded game in the viewer and the client)."""
    from marl_bgs_clients.tdm.shots import draw_all

    for path in draw_all(out):
        typer.echo(str(path))
