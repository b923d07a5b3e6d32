"""`marl-bgs-clients`: open the Replay Viewer, play in the BattleClient, watch two Systems, or
draw the docs' screenshots.

    marl-bgs-clients view game.replay.zip
    marl-bgs-clients play tdm-alpha tdm-beta --human 0 --map 47 --out mine.replay.zip
    marl-bgs-clients watch tdm-alpha tdm-beta --map 47 --gif game.gif   # = marl-bgs-watch
    marl-bgs-clients screenshots --out docs/clients
    marl-bgs-clients two-bridge --variant V2_Base --gif game.gif          # a Two-Bridge episode
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from marl_bgs_clients.watch import ERRORS, watch
from marl_bgs_eval import console as ui

app = ui.App("marl-bgs-clients", errors=ERRORS, add_completion=False, no_args_is_help=True,
             help="MARL-BattleGrounds clients: BattleClient and Replay Viewer.")  # fmt: skip
app.command()(watch)


@app.command(name="two-bridge")
def two_bridge(
    gif: Annotated[Path, typer.Option(help="Where to write the animation")],
    variant: Annotated[str, typer.Option(help="V1_Base ... V3_Navigate")] = "V2_Base",
    policy: Annotated[str, typer.Option(help="random or idle")] = "random",
    seed: Annotated[int, typer.Option(min=0, help="The episode's seed")] = 0,
    fps: Annotated[int, typer.Option(min=1, max=60, help="Frames per second")] = 10,
    replay: Annotated[
        Path | None, typer.Option(help="Draw this episode replay file instead of playing one")
    ] = None,
    save: Annotated[Path | None, typer.Option(help="Also save the episode replay here")] = None,
) -> None:
    """Play one Two-Bridge episode with a built-in team (or read an episode replay file) and
    write it as a GIF (trained teams: `marl_bgs_eval.episode_replays.record` with
    `marl_bgs_train.two_bridge.run.load_policy`)."""
    import jax

    import marl_bgs
    from marl_bgs import ConfigError
    from marl_bgs_clients import two_bridge as pictures
    from marl_bgs_eval import episode_replays
    from marl_bgs_eval.errors import EvalError

    teams = {"random": marl_bgs.random_policy, "idle": marl_bgs.idle_policy}
    if policy not in teams:
        raise typer.BadParameter(
            f"expected one of {list(teams)}, got {policy!r}", param_hint="--policy"
        )
    try:
        if replay is not None:
            episode = episode_replays.load(replay)
        else:
            env = marl_bgs.make("two-bridge", variant=variant, num_envs=1)
            key = jax.random.key(seed)
            episode = episode_replays.record(
                teams[policy](env.mode), key, settings={"variant": variant}, system=policy
            )[0]
        if save is not None:
            episode_replays.save(episode, save)
        pictures.save_gif(episode, gif, fps=fps)
    except (ConfigError, EvalError) as err:
        raise typer.BadParameter(str(err)) from None
    outcome = marl_bgs.two_bridge.OUTCOMES[episode.header["outcome"]]
    typer.echo(f"{gif}: {episode.ticks} steps, {outcome}")


@app.command()
def view(
    path: Annotated[Path, typer.Argument(help="A replay file (.replay.zip)")],
    pov: Annotated[int | None, typer.Option(help="Start in slot 0-9's POV")] = None,
) -> None:
    """Open a replay in the Replay Viewer (a file that fails the checks, or no display, is one
    line on stderr and exit code 2)."""
    from marl_bgs_clients import preflight

    preflight.view(path, pov)  # before any heavy import: within a second
    from marl_bgs_clients.viewer import ReplayViewer
    from marl_bgs_eval import replays

    try:
        replay = replays.load(path)
    except Exception as err:  # every refusal of the replay checks, whatever its kind
        ui.fail(f"cannot open {path}: {err}")
    viewer = ReplayViewer(replay, name=path.name, out_dir=path.parent)
    viewer.observer = viewer.selected = pov
    viewer.run()  # pragma: no cover - opens a window


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
    from marl_bgs_clients.battle import BattleClient
    from marl_bgs_clients.session import HumanGame

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
    from marl_bgs_clients.shots import draw_all

    for path in draw_all(out):
        typer.echo(str(path))
