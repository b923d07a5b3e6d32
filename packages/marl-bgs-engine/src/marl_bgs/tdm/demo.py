"""The main job's demo: Team Deathmatch matches between the scripted teams and random play.

python -m marl_bgs.tdm.demo --games 16 --ticks 300 --map 47
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import marl_bgs
from marl_bgs.core.team import TeamStep
from marl_bgs.tdm.constants import A_WINS, B_WINS, DRAW

MATCHES = (("tdm-gamma", "tdm-beta"), ("tdm-gamma", "random"), ("tdm-beta", "random"))


def _policy(name: str, env: marl_bgs.BatchedEnv) -> marl_bgs.Policy:
    return marl_bgs.random_policy(env.mode) if name == "random" else marl_bgs.scripted_policy(name)


def run(team_a: str, team_b: str, map_id: int, games: int, ticks: int, seed: int) -> dict:
    """Play `games` games side by side for `ticks` ticks (finished games restart in place)."""
    env = marl_bgs.make("tdm", map_id=map_id, num_envs=games)

    def summarize(out: TeamStep) -> tuple[jax.Array, jax.Array]:
        facts = out.info["facts"]
        finished = jnp.where(out.done, out.info["outcome"], 0)
        totals = [jnp.sum(facts.damage), jnp.sum(facts.useful_healing), jnp.sum(facts.died)]
        totals += [jnp.sum(facts.points[:, t]) for t in (0, 1)]
        return finished, jnp.stack(totals)

    policies = [_policy(team_a, env), _policy(team_b, env)]
    play = jax.jit(marl_bgs.team_rollout(env, policies, ticks, summarize))
    start = time.perf_counter()
    finished, totals = jax.block_until_ready(play(jax.random.key(seed)))
    f = np.asarray(finished)
    damage, healing, deaths, points_a, points_b = np.asarray(totals).sum(axis=0)
    return {
        "finished": int(np.sum(f > 0)),
        "a_wins": int(np.sum(f == A_WINS)),
        "b_wins": int(np.sum(f == B_WINS)),
        "draws": int(np.sum(f == DRAW)),
        "damage": float(damage),
        "healing": float(healing),
        "deaths": int(deaths),
        "points_a": int(points_a),
        "points_b": int(points_b),
        "seconds": time.perf_counter() - start,
    }


# The evaluation command the closing hint suggests (marl-bgs-eval's tests parse it).
EVAL_PLAY = ("play", "tdm-alpha", "random", "--maps", "test")
# From a clone's root: the packages are not on an index, so evaluation installs with the engine.
EVAL_INSTALL = "pip install ./packages/marl-bgs-engine ./packages/marl-bgs-eval"


def eval_script() -> Path | None:
    """`marl-bgs-eval` of the environment running this Python (`.nox/demo/bin/` under
    `nox -s demo`), or None when marl-bgs-eval is not installed there."""
    script = Path(sys.executable).parent / "marl-bgs-eval"
    return script if script.is_file() else None


def next_steps() -> str:
    """The demo's closing hint, with commands that work from where it ran."""
    script = eval_script()
    play = " ".join(EVAL_PLAY)
    if script is None:
        evaluate = f"`{EVAL_INSTALL}` from the clone's root, then `marl-bgs-eval {play}`"
    else:
        shown = os.path.relpath(script)
        evaluate = f"`{shown if not shown.startswith('..') else script} {play}`"
    return (
        f"Next: docs/opponents.md (how the scripted teams play), {evaluate} (TDM-Alpha against "
        "random play on the five test maps), docs/api.md (your own team policy)."
    )


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    # The engine has no typer: its version line matches marl_bgs_eval.console.version_text's.
    parser.add_argument(
        "--version", action="version", version=f"marl-bgs-engine {marl_bgs.__version__}"
    )
    parser.add_argument("--map", type=int, default=47, help="map id (default: test map 47)")
    parser.add_argument("--games", type=int, default=16, help="games played side by side")
    parser.add_argument("--ticks", type=int, default=300, help="ticks per match")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    spec = marl_bgs.maps.load(args.map)
    print(
        f"marl-bgs-engine {marl_bgs.__version__} on {jax.default_backend()}: map {spec.id} "
        f"'{spec.name}', {args.games} games side by side for {args.ticks} ticks per match"
    )
    for team_a, team_b in MATCHES:
        out = run(team_a, team_b, args.map, args.games, args.ticks, args.seed)
        print(
            f"{team_a} (A) vs {team_b} (B): {out['finished']} games finished, A won "
            f"{out['a_wins']}, B won {out['b_wins']}, {out['draws']} drawn; points "
            f"{out['points_a']}-{out['points_b']}, {out['deaths']} deaths, damage "
            f"{out['damage']:.0f}, healing {out['healing']:.0f} "
            f"({out['seconds']:.0f} s with compile)"
        )
    print(next_steps())


if __name__ == "__main__":
    main()
