"""The `marl-bgs-llm` command line: see the prompt an agent reads at a moment of a real game.

    marl-bgs-llm prompt tdm-alpha tdm-beta --map 47 --tick 12 --team a --slot 0

plays the two Systems (as evaluation does: game 0, seed number 0, team A on the left) up to the
tick and prints that agent's `actor-text-v1` prompt. Play an LLM team with `marl-bgs-eval play
llm:<model>@<url> <opponent>`.
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
    system_a: str, system_b: str, *, map_id: int | str = 47, tick: int = 12, team: int = 0,
    slot: int = 0, seed: int = 0,
) -> str:  # fmt: skip
    """The prompt of one agent (`team` 0: A, 1: B; roster `slot`) at `tick` of a game between
    two Systems, played with evaluation's keys (game 0, seed number 0)."""
    import jax
    import jax.numpy as jnp

    import marl_bgs
    from marl_bgs import team_inputs
    from marl_bgs.core.checks import check_int
    from marl_bgs.tdm.config import RuleValues
    from marl_bgs_eval.evaluate import as_system
    from marl_bgs_eval.play import play_tick
    from marl_bgs_eval.seeds import memory_keys, root_key
    from marl_bgs_llm.text_view import format_actor_view

    if team not in (0, 1) or slot not in range(5):
        raise EvalError(f"team, slot: expected team 0 or 1 and slot 0-4, got {team}, {slot}")
    tick = check_int(tick, "tick", 0, RuleValues.tick_limit - 1, error=EvalError)
    teams = (as_system(system_a, "system_a"), as_system(system_b, "system_b"))
    env = marl_bgs.make("tdm", map_id=map_id, num_envs=1)  # the default rule values
    _, state = env.reset(jax.random.key(seed))
    root, zeros = root_key(seed), jnp.zeros(1, jnp.int32)
    memories = tuple(
        jax.vmap(s.init)(memory_keys(root, zeros, zeros, t)) for t, s in enumerate(teams)
    )
    step = jax.jit(lambda state, memories: play_tick(env, teams, root, zeros, state, memories))
    for _ in range(tick):
        played = step(state, memories)
        state, memories = played.state, played.memories
    if bool(state.done[0]):
        raise EvalError(f"tick: the game ended before tick {tick}")
    inputs = jax.device_get(team_inputs(env, state)[team])
    pick = lambda tree: jax.tree.map(lambda a: a[0, slot], tree)  # noqa: E731
    return format_actor_view(pick(inputs.views), pick(inputs.masks))


@app.command()
def prompt(
    system_a: Annotated[str, typer.Argument(help="Team A's System name")],
    system_b: Annotated[str, typer.Argument(help="Team B's System name")],
    map_id: Annotated[str, typer.Option("--map", help="Map id or name")] = "47",
    tick: Annotated[int, typer.Option(help="Tick of the decision")] = 12,
    team: Annotated[str, typer.Option(help="a or b")] = "a",
    slot: Annotated[int, typer.Option(help="Roster slot 0-4")] = 0,
    seed: Annotated[int, typer.Option(help="Root seed")] = 0,
    out: Annotated[Path | None, typer.Option(help="Write the prompt to this file")] = None,
) -> None:
    """Print the actor-text-v1 prompt of one agent at one tick of a game between two Systems."""
    if team not in ("a", "b"):
        raise EvalError(f"team: expected a or b, got {team!r}")
    map_ref = ui.layout(map_id, "tdm", files=True)  # the prompt is Team Deathmatch's text view
    text = game_prompt(system_a, system_b, map_id=map_ref, tick=tick, team="ab".index(team),
                       slot=slot, seed=seed)  # fmt: skip
    if out is None:
        typer.echo(text)
    else:
        out.write_text(text + "\n")
        typer.echo(f"wrote {len(text)} characters in {text.count(chr(10)) + 1} lines to {out}")
