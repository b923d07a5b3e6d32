"""The main job's demo: a batch of Team Deathmatch games with random legal actions.

python -m marl_bgs.demo --games 64 --ticks 300 --map 47
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import marl_bgs
from marl_bgs.tdm.constants import A_WINS, B_WINS, DRAW


def run(map_id: int, games: int, ticks: int, seed: int) -> dict[str, float]:
    """Play `games` random-legal games for `ticks` ticks, restarting finished games in place."""
    env = marl_bgs.make("tdm", map_id=map_id, num_envs=games)
    _, state = env.reset(jax.random.key(seed))

    def tick(carry, _):
        state, key = carry
        key, k_act, k_step, k_reset = jax.random.split(key, 4)
        actions = env.sample_actions(k_act, state)
        _, state, _, done, info = env.step(k_step, state, actions)
        facts = info["facts"]
        finished = jnp.where(done["__all__"], info["outcome"], 0)
        summary = jnp.stack(
            [jnp.sum(facts.damage), jnp.sum(facts.useful_healing)]
            + [jnp.sum(facts.excess_healing), jnp.sum(facts.died)]
            + [jnp.sum(facts.points[:, t]) for t in (0, 1)]
        )
        _, state = env.reset_done(k_reset, state)
        return (state, key), (finished, summary)

    run_all = jax.jit(lambda s, k: jax.lax.scan(tick, (s, k), None, length=ticks))
    start = time.perf_counter()
    (_, _), (finished, summary) = jax.block_until_ready(run_all(state, jax.random.key(seed + 1)))
    seconds = time.perf_counter() - start
    f = np.asarray(finished)
    damage, useful, excess, deaths, points_a, points_b = np.asarray(summary).sum(axis=0)
    return {
        "games_finished": float(np.sum(f > 0)),
        "a_wins": float(np.sum(f == A_WINS)),
        "b_wins": float(np.sum(f == B_WINS)),
        "draws": float(np.sum(f == DRAW)),
        "damage_dealt": float(damage),
        "healing_useful": float(useful),
        "healing_excess": float(excess),
        "deaths": float(deaths),
        "points_a": float(points_a),
        "points_b": float(points_b),
        "seconds_with_compile": seconds,
    }


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", type=int, default=47, help="map id (default: test map 47)")
    parser.add_argument("--games", type=int, default=64, help="games played side by side")
    parser.add_argument("--ticks", type=int, default=300, help="ticks to simulate")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    spec = marl_bgs.maps.load(args.map)
    print(
        f"marl-bgs-engine {marl_bgs.__version__} on {jax.default_backend()}: {args.games} games"
        f" on map {spec.id} '{spec.name}', {args.ticks} ticks, random legal actions"
    )
    out = run(args.map, args.games, args.ticks, args.seed)
    steps = args.games * args.ticks
    print(
        f"finished games: {out['games_finished']:.0f} (team A {out['a_wins']:.0f}, "
        f"team B {out['b_wins']:.0f}, draws {out['draws']:.0f})"
    )
    print(
        f"deaths {out['deaths']:.0f}, points A {out['points_a']:.0f} / B {out['points_b']:.0f}, "
        f"damage dealt {out['damage_dealt']:.0f}, healing {out['healing_useful']:.0f} useful"
        f" + {out['healing_excess']:.0f} lost to full health"
    )
    print(f"{steps} game steps in {out['seconds_with_compile']:.1f} s (compile included)")


if __name__ == "__main__":
    main()
