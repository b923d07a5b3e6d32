"""`marl-bgs-clients`: open the Replay Viewer, play in the BattleClient, watch two Systems, or
draw the docs' screenshots.

    marl-bgs-clients view game.replay.zip
    marl-bgs-clients play tdm-alpha tdm-beta --human 0 --map 47 --out mine.replay.zip
    marl-bgs-clients watch tdm-alpha tdm-beta --map 47 --gif game.gif   # = marl-bgs-watch
    marl-bgs-clients screenshots --out docs/clients
    marl-bgs-clients export game.replay.zip --out game.gif            # any mode's replay
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated, Any

import typer

from marl_bgs_clients.preflight import ERRORS
from marl_bgs_eval import console as ui

COMMANDS = "marl_bgs_clients.commands"  # entry points: `register(app)` adds a mode's commands
app = ui.App("marl-bgs-clients", errors=ERRORS, add_completion=False, no_args_is_help=True,
             help="MARL-BattleGrounds clients: BattleClient and Replay Viewer.")  # fmt: skip
for _commands in entry_points(group=COMMANDS):  # a mode's own commands (Team Deathmatch: play)
    _commands.load()(app)


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
