"""The `marl-bgs-llm` command line: see the prompt an agent reads at a moment of a real game.

    marl-bgs-llm prompt tdm-alpha tdm-beta --map 47 --tick 12 --team a --slot 0

plays the two Systems (as evaluation does: game 0, seed number 0, team A on the left) up to the
tick and prints that agent's prompt in its mode's text view (`--mode two-bridge` for Two-Bridge,
with one System). Play an LLM team with `marl-bgs-eval play llm:<model>@<url> <opponent>`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from marl_bgs_eval import console as ui
from marl_bgs_eval.errors import EvalError

app = ui.App(
    "marl-bgs-llm", help="Tools of the MARL-BattleGrounds LLM-agent API.", no_args_is_help=True
)


@app.callback()
def main() -> None:
    """Tools of the MARL-BattleGrounds LLM-agent API (`marl-bgs-llm prompt --help`)."""


def game_prompt(
    system_a: str, system_b: str | None = None, *, mode: str = "tdm",
    map_id: int | str | None = None, tick: int = 12, team: int = 0, slot: int = 0, seed: int = 0,
) -> str:  # fmt: skip
    """The prompt of one agent (`team` 0: A, 1: B; roster `slot`) at `tick` of a game of `mode`
    between two Systems (one for a mode that plays the other team itself), played with
    evaluation's keys (game 0, seed number 0), in the mode's text view. `map_id`: a layout's
    index or name, or what the mode's builder takes (Team Deathmatch: a map file); default: the
    first of the mode's test split, else its first layout."""
    import jax
    import jax.numpy as jnp

    import marl_bgs
    from marl_bgs import team_inputs
    from marl_bgs.core.checks import check_int
    from marl_bgs_eval.evaluate import as_system
    from marl_bgs_eval.modes import parts as eval_parts
    from marl_bgs_eval.play import play_tick
    from marl_bgs_eval.seeds import memory_keys, root_key
    from marl_bgs_llm.modes import text_parts

    kit = marl_bgs.kit(mode)
    parts = text_parts(kit.id)
    if kit.layouts is None:
        raise EvalError(f"mode: {kit.id!r} has no layouts to play")
    names = kit.layouts.names
    if map_id is None:
        test = kit.layouts.splits.get("test")
        ref: int | str = names[test[0] if test else 0]
    elif isinstance(map_id, int):
        ref = names[kit.layouts.select(str(map_id))[0]]  # an index, range-checked
    else:
        ref = map_id  # a name, or what the mode's builder takes (Team Deathmatch: a map file)
    if (system_b is None) != (kit.controlled_teams == 1):
        raise EvalError(f"system_b: mode {kit.id!r} has {kit.controlled_teams} team(s) to play")
    systems = [system_a] if system_b is None else [system_a, system_b]
    env = kit.build(**{kit.layouts.keyword: ref}, num_envs=1)  # the default rule values
    size = len(env.spec.teams[0])
    if team not in range(kit.controlled_teams) or slot not in range(size):
        raise EvalError(
            f"team, slot: expected team {'0 or 1' if kit.controlled_teams == 2 else '0'} and "
            f"slot 0-{size - 1}, got {team}, {slot}"
        )
    limit = eval_parts(kit.id).meta(env)["tick_limit"]
    tick = check_int(tick, "tick", 0, limit - 1, error=EvalError)
    teams = tuple(as_system(s, f"system_{'ab'[t]}", kit.id) for t, s in enumerate(systems))
    _, state = env.reset(jax.random.key(seed))
    root, zeros = root_key(seed), jnp.zeros(1, jnp.int32)
    memories = tuple(
        jax.vmap(s.init)(memory_keys(root, zeros, zeros, t)) for t, s in enumerate(teams)
    )
    step = jax.jit(lambda state, memories: play_tick(env, teams, root, zeros, state, memories))
    for _ in range(tick):
        played = step(state, memories)
        state, memories = played.state, played.memories
    if int(state.outcome[0]) != 0:  # every mode: outcome 0 while the game runs
        raise EvalError(f"tick: the game ended before tick {tick}")
    inputs = jax.device_get(team_inputs(env, state)[team])
    pick = lambda tree: jax.tree.map(lambda a: a[0, slot], tree)  # noqa: E731
    return parts.prompt(pick(inputs.views), pick(inputs.masks), slot, True)


@app.command()
def prompt(
    system_a: Annotated[str, typer.Argument(help="Team A's System name")],
    system_b: Annotated[
        str | None, typer.Argument(help="Team B's System name (none in Two-Bridge)")
    ] = None,
    mode: ui.Mode = "tdm",
    map_id: Annotated[
        str | None, typer.Option("--map", help="Layout (map, variant) index or name")
    ] = None,
    tick: Annotated[int, typer.Option(help="Tick of the decision")] = 12,
    team: Annotated[str, typer.Option(help="a or b")] = "a",
    slot: Annotated[int, typer.Option(help="Roster slot (0-4 in both modes)")] = 0,
    seed: Annotated[int, typer.Option(help="Root seed")] = 0,
    out: Annotated[Path | None, typer.Option(help="Write the prompt to this file")] = None,
) -> None:
    """Print one agent's prompt (its mode's text view) at one tick of a game between Systems."""
    if team not in ("a", "b"):
        raise EvalError(f"team: expected a or b, got {team!r}")
    map_ref = None if map_id is None else ui.layout(map_id, mode, files=True)
    text = game_prompt(
        system_a, system_b, mode=mode, map_id=map_ref, tick=tick, team="ab".index(team),
        slot=slot, seed=seed,
    )  # fmt: skip
    if out is None:
        typer.echo(text)
    else:
        out.write_text(text + "\n")
        typer.echo(f"wrote {len(text)} characters in {text.count(chr(10)) + 1} lines to {out}")
