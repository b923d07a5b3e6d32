"""Watch two Systems play: one game, recorded and opened in the Replay Viewer, or written as an
animation without a window.

    marl-bgs-watch tdm-alpha tdm-beta --map 47                  # a window
    marl-bgs-watch tdm-alpha tdm-beta --map 47 --gif game.gif   # no window
    marl-bgs-watch tdm-alpha random --map 12 --mp4 game.mp4 --pov 2 --save game.replay.zip

The game is played by evaluation (`marl_bgs_eval.evaluate`, a spawn-swapped pair; `--a-right`
picks the game where team A starts on the right) and recorded by
`marl_bgs_eval.tdm.replays.record`, so it is the same game, metrics and replay an evaluation
would give.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from marl_bgs_clients import preflight
from marl_bgs_clients.preflight import ERRORS
from marl_bgs_eval import console as ui

if TYPE_CHECKING:  # imported where the game is played, so --help needs neither JAX nor pygame
    from marl_bgs_eval.array_zip import Replay


def play_one(
    system_a: str, system_b: str, map_ref: int | str, seed: int = 0, seed_number: int = 0,
    a_right: bool = False, tick_limit: int | None = None, progress: bool = False,
) -> Replay:  # fmt: skip
    """Play and record one game of `system_a` (team A) against `system_b` on a map (an id, a
    name or a map file; `progress`: report the play and the recording on stderr)."""
    import marl_bgs_eval as ev
    from marl_bgs_eval.progress import note
    from marl_bgs_eval.tdm import replays

    rules: dict[str, Any] = {} if tick_limit is None else {"tick_limit": tick_limit}
    games = ev.evaluate(
        system_a, system_b, maps=[map_ref], games_per_map=2, seed=seed,
        first_seed_number=seed_number, first_game=0, progress=progress, **rules,
    )  # fmt: skip
    row = games.loc[games["a_spawn"] == ("right" if a_right else "left")].iloc[:1]
    if progress:
        note("recording the game")
    return replays.record(system_a, system_b, row, maps=[map_ref], **rules)[0]


def watch(
    system_a: Annotated[str, typer.Argument(help="Team A's System (a registered name)")],
    system_b: Annotated[str, typer.Argument(help="Team B's System")],
    map_ref: Annotated[str, typer.Option("--map", help="Map id, name or .json file")] = "47",
    seed: Annotated[int, typer.Option(help="Root seed of the evaluation")] = 0,
    seed_number: Annotated[int, typer.Option(help="Seed number of the game")] = 0,
    a_right: Annotated[bool, typer.Option(help="Team A starts on the right edge")] = False,
    tick_limit: Annotated[int | None, typer.Option(help="Ticks at most (engine default)")] = None,
    pov: Annotated[
        int | None, typer.Option(help="Show agent slot 0-9's POV, not the Oracle")
    ] = None,
    gif: Annotated[
        Path | None, typer.Option(help="Write a GIF instead of opening a window")
    ] = None,
    mp4: Annotated[
        Path | None, typer.Option(help="Write an MP4 instead of opening a window")
    ] = None,
    fps: Annotated[float, typer.Option(help="Frames (ticks) a second of the animation")] = 4.0,
    save: Annotated[Path | None, typer.Option(help="Also save the replay file")] = None,
) -> None:
    """Play one game between two Systems and watch it (or write it as GIF/MP4)."""
    preflight.watch(pov, gif, mp4)  # before any heavy import: within a second
    from marl_bgs_clients.viewer import ReplayViewer
    from marl_bgs_eval.progress import note
    from marl_bgs_eval.tdm import replays
    from marl_bgs_eval.tdm.legend import result_text

    ref = ui.layout(map_ref, "tdm", files=True)  # the clients draw Team Deathmatch
    replay = play_one(system_a, system_b, ref, seed, seed_number, a_right, tick_limit,
                      progress=True)  # fmt: skip
    h = replay.header
    typer.echo(f"{h['system_a']} vs {h['system_b']} on map {h['map']} {h['map_name']}: "
               f"{result_text(h)} in {h['ticks']} ticks")  # fmt: skip
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        typer.echo(f"replay: {replays.save(replay, save)}")
    viewer = ReplayViewer(replay, name=f"{h['system_a']}-vs-{h['system_b']}-map{h['map']}")
    viewer.observer = viewer.selected = pov
    for path in (gif, mp4):
        if path is not None:
            note(f"writing {path} ({replay.ticks + 1} frames)")
            typer.echo(f"animation: {viewer.export_clip(path.suffix, path, fps)}")
    if gif is None and mp4 is None:  # pragma: no cover - opens a window
        viewer.run()


app = ui.App("marl-bgs-clients", errors=ERRORS, add_completion=False)
app.command()(watch)
