"""The line search: a breadth-limited search over team A's joint legal actions against the
scenario's deterministic controller.

    python -m marl_bgs.tdm.scenarios.search 6 --beam 32
    python ci/docs_pages/search_page.py --doc docs/scenarios/search.md   # every scenario's page

From the snapshot it expands every joint legal action of team A's living agents (every legal
move times every legal combat pair, for each agent), with team B playing its controller, which
reads only the state it sees (so its reply does not depend on team A's choice in the same
tick). Only the agents living when the search starts are searched: one that respawns during
the search stands still (each respawned agent's moves would multiply the breadth by 9).
Children that lose or draw are dropped, identical positions (units, score and the controller's
memory) are merged, and the `beam` most promising positions (points, then enemy health lost
minus own health lost) are expanded on the next tick. It reports every win it finds: the
shortest line's length and actions, how many first-tick joint actions lead to a win it found,
and how the designed line compares: whether it wins when replayed, and for every first-tick
joint action whether the designed line's later ticks still win after it (exact: how much
freedom the first tick leaves). A breadth limit means a line the search does not find may
still exist: its counts of wins found are lower bounds.
"""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.core.team import act_team, team_inputs
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.actions import COMBAT_NAMES
from marl_bgs.tdm.constants import A_WINS, ONGOING, TEAM_SIZE
from marl_bgs.tdm.mode import TDMEnv, make_tdm
from marl_bgs.tdm.scenarios.env import opponent_policy, play, scenario_pool
from marl_bgs.tdm.scenarios.files import Scenario, ScenarioError, load
from marl_bgs.tdm.tables import lookup

CHUNK = 4096  # positions stepped per call (one compiled program)
PAGE_TOOL = "ci/docs_pages/search_page.py"  # writes docs/scenarios/search.md (not in the wheel)


@dataclass
class SearchReport:
    """What a search found (counts are lower bounds unless `exhaustive`)."""

    scenario: int
    beam: int
    depth: int
    first_tick_actions: int  # team A's joint legal actions on the first tick (exact)
    first_tick_winning: int  # of them, how many lead to a win the search found (a lower bound)
    wins_by_depth: dict[int, int] = field(default_factory=dict)  # line length -> positions won
    shortest: list[np.ndarray] | None = None  # team A's actions [5, 3] per tick, own frame
    designed: int | None = None  # the designed line's length
    designed_wins: bool | None = None  # the designed line replayed against the controller
    first_tick_with_line: int | None = None  # first-tick joint actions the line's rest still wins
    expanded: int = 0  # positions stepped
    seconds: float = 0.0

    @property
    def shortest_length(self) -> int | None:
        return None if self.shortest is None else len(self.shortest)

    def summary(self) -> str:
        lines = [
            f"scenario {self.scenario}: beam {self.beam}, depth {self.depth}, "
            f"{self.expanded:,} positions in {self.seconds:.1f} s",
            f"  first tick: {self.first_tick_actions:,} joint legal actions, "
            f"{self.first_tick_winning:,} lead to a win found",
            f"  wins found by line length: {self.wins_by_depth or 'none'}",
        ]
        if self.designed is not None:
            ok = "wins" if self.designed_wins else "DOES NOT WIN"
            lines.append(f"  designed line: {self.designed} ticks, replayed: {ok}")
        if self.first_tick_with_line is not None:
            lines.append(
                f"  first-tick joint actions that still win when the designed line's later ticks"
                f" follow (exact): {self.first_tick_with_line:,} of {self.first_tick_actions:,}"
            )
        if self.shortest is not None and self.designed and len(self.shortest) < self.designed:
            lines.append(f"  SHORTER LINE FOUND: {len(self.shortest)} ticks")
        if self.shortest is not None:
            lines.append(f"  shortest found ({len(self.shortest)} ticks):")
            lines += [f"    tick {t + 1}: {describe(a)}" for t, a in enumerate(self.shortest)]
        return "\n".join(lines)


def describe(actions: np.ndarray) -> str:
    """Team A's actions [5, 3] by name, e.g. `a_0 east enemy_2_basic`."""
    return "; ".join(
        f"a_{k} {MOVE_NAMES[m]} {COMBAT_NAMES[t][u]}" for k, (m, t, u) in enumerate(actions)
        if (m, t, u) != (0, 0, 0)
    ) or "all stay"  # fmt: skip


@cache
def _programs(opponent: str) -> tuple[Any, Any]:
    env: TDMEnv = make_tdm(num_envs=CHUNK)  # the state carries the scenario: any env steps it
    policy = opponent_policy(opponent)

    @jax.jit
    def reply(state: Any, memory: Any) -> Any:
        inputs = team_inputs(env, state)
        keys = jax.random.split(jax.random.key(0), CHUNK)
        actions, memory = act_team(env.spec, policy, keys, memory, inputs[1])
        masks = env.spec.team_slice(env.action_masks(state), 0)
        return actions, memory, masks

    @jax.jit
    def advance(state: Any, actions: jax.Array) -> Any:
        _, nxt, _, _, _ = env.step(jax.random.key(0), state, actions)
        return nxt, _value(nxt), _fingerprint(nxt)

    return reply, advance


def _value(state: Any) -> jax.Array:
    """How promising a position is for team A [n]: points first, then health traded."""
    u = state.units
    frac = u.health / lookup(C.MAX_HEALTH, jnp.maximum(u.class_id, 1)).astype(jnp.float32)
    lost = jnp.where(u.class_id > 0, 1.0 - frac, 0.0)
    margin = (state.score[:, 0] - state.score[:, 1]).astype(jnp.float32)
    return 10.0 * margin + lost[:, TEAM_SIZE:].sum(-1) - lost[:, :TEAM_SIZE].sum(-1)


def _fingerprint(state: Any) -> jax.Array:
    """Everything that can make two positions play differently, as float32 [n, K]."""
    u = state.units
    parts = [
        u.pos.reshape(u.pos.shape[0], -1), u.health, u.alive, u.cooldown, u.stun, u.trap,
        u.slow_charge, u.slow_hunter, u.slow_poison, u.antiheal, u.freedom, u.burst, u.shield,
        u.recovery, u.last_move, u.last_target, u.last_ult, state.score, state.wave,
    ]  # fmt: skip
    return jnp.concatenate([jnp.asarray(p, jnp.float32).reshape(p.shape[0], -1) for p in parts], 1)


MEMORY_PRINT_MAX = 512  # memory leaves up to this size per game are part of a position's key


def _memory_print(memory: Any) -> np.ndarray:
    """The controller's memory per position (float32 [n, K]): every leaf but the large ones
    fixed per map (a scripted team's walking grid); its walking field is kept."""
    small = [x for x in jax.tree.leaves(memory) if x[0].size <= MEMORY_PRINT_MAX]
    return np.concatenate([np.asarray(x, np.float32).reshape(x.shape[0], -1) for x in small], 1)


def _joined(n: int, *parts: Any) -> np.ndarray:
    """The first n rows of chunks joined."""
    return np.concatenate(parts)[:n]


def _take(tree: Any, index: np.ndarray) -> Any:
    """Rows of every leaf, on the host (numpy: no small program compiled per leaf and shape)."""
    return jax.tree.map(lambda a: np.asarray(a)[index], tree)


def _pad(tree: Any, n: int) -> Any:
    """Every leaf padded to n rows by repeating its last row, on the host."""
    return jax.tree.map(lambda a: np.concatenate([a, np.repeat(a[-1:], n - a.shape[0], 0)]), tree)


def _advance_chunk(
    advance: Any, frontier: Any, parent: np.ndarray, chosen: np.ndarray, b_actions: np.ndarray
) -> Any:
    """Step up to CHUNK children: parent positions, team A's choices, team B's replies."""
    count = len(parent)
    acts = np.concatenate([chosen, b_actions[parent]], axis=1)
    acts = np.concatenate([acts, np.repeat(acts[-1:], CHUNK - count, 0)])
    return advance(_pad(_take(frontier, parent), CHUNK), jnp.asarray(acts))


def _options(masks: Any, i: int, searched: np.ndarray) -> list[list[tuple[int, int, int]]]:
    """Each team A agent's legal (move, target, ultimate) choices in position i; agents not
    `searched` [5] only stand still."""
    move, pair = np.asarray(masks.move[i]), np.asarray(masks.pair[i])
    out = []
    for k in range(TEAM_SIZE):
        moves = np.flatnonzero(move[k]) if searched[k] else [0]
        pairs = np.argwhere(pair[k]) if searched[k] else [(0, 0)]
        out.append([(int(m), int(t), int(u)) for m in moves for t, u in pairs])
    return out


def _first_tick_with_line(sc: Scenario, line: np.ndarray, choices: np.ndarray) -> int:
    """How many first-tick joint actions still win, by the line's last tick, when the designed
    line's later ticks follow."""
    wins = 0
    for lo in range(0, len(choices), CHUNK):
        part = choices[lo : lo + CHUNK]
        plans = np.repeat(line[None], CHUNK, 0)
        plans[: len(part), 0] = part
        outcome = play(sc, plans=plans)["outcome"][len(line) - 1, : len(part)]
        wins += int((outcome == A_WINS).sum())
    return wins


def search(
    scenario: Any, *, beam: int = 16, depth: int | None = None, prefix: int = 0
) -> SearchReport:
    """Search team A's lines in `scenario` (see the module docstring); `prefix`: start after the
    designed line's first `prefix` ticks (to ask what else wins from there)."""
    sc: Scenario = load(scenario)
    line = sc.lines[0].actions()
    if isinstance(beam, bool) or not isinstance(beam, int) or not 1 <= beam <= CHUNK:
        raise ScenarioError(f"beam: expected an integer in [1, {CHUNK}], got {beam!r}")
    if isinstance(prefix, bool) or not isinstance(prefix, int) or not 0 <= prefix < len(line):
        raise ScenarioError(
            f"prefix: expected an integer in [0, {len(line) - 1}] (ticks of the designed line to "
            f"play first), got {prefix!r}"
        )
    reply, advance = _programs(sc.opponent)
    start = time.perf_counter()
    one = jax.tree.map(lambda a: a[:1, 0], scenario_pool(sc).states)
    policy = opponent_policy(sc.opponent)
    memory = jax.vmap(policy.init)(jax.random.split(jax.random.key(0), 1))
    played = line[:prefix]
    for actions in played:
        b, memory, _ = reply(*_pad((one, memory), CHUNK))
        memory = _take(memory, np.zeros(1, np.int64))
        nxt, _, _ = _advance_chunk(advance, one, np.zeros(1, np.int64), actions[None],
                                   np.asarray(b)[:1])  # fmt: skip
        one = _take(nxt, np.zeros(1, np.int64))
    left = sc.ticks_left - len(played)
    depth = left if depth is None else min(depth, left)
    searched = np.asarray(one.units.alive[0, :TEAM_SIZE])  # respawned agents stand still
    frontier, paths, roots = one, [played], np.zeros(1, np.int64)
    report = SearchReport(sc.id, beam, depth, 0, 0)
    winning_roots: set[int] = set()
    first_choices = np.zeros((0, TEAM_SIZE, 3), np.int32)
    for d in range(1, depth + 1):
        n = len(paths)
        replies, memory_next, masks = [], [], []
        for lo in range(0, n, CHUNK):
            part = _pad(_take((frontier, memory), np.arange(lo, min(n, lo + CHUNK))), CHUNK)
            b, m, k = reply(*part)
            replies.append(np.asarray(b))
            memory_next.append(m)
            masks.append(jax.tree.map(np.asarray, k))
        b_actions = np.concatenate(replies)[:n]
        new_memory = jax.tree.map(partial(_joined, n), *memory_next)
        masks_all = jax.tree.map(partial(_joined, n), *masks)
        parent, chosen = [], []
        for i in range(n):
            for joint in itertools.product(*_options(masks_all, i, searched)):
                parent.append(i)
                chosen.append(joint)
        parent_a = np.asarray(parent, np.int64)
        chosen_a = np.asarray(chosen, np.int32).reshape(-1, TEAM_SIZE, 3)
        if d == 1:
            report.first_tick_actions = len(chosen_a)
            first_choices = chosen_a
        values, prints, outcomes = [], [], []
        for lo in range(0, len(parent_a), CHUNK):
            nxt, v, fp = _advance_chunk(advance, frontier, parent_a[lo : lo + CHUNK],
                                        chosen_a[lo : lo + CHUNK], b_actions)  # fmt: skip
            count = min(CHUNK, len(parent_a) - lo)
            values.append(np.asarray(v)[:count])
            prints.append(np.asarray(fp)[:count])
            outcomes.append(np.asarray(nxt.outcome)[:count])
        report.expanded += len(parent_a)
        value, outcome = np.concatenate(values), np.concatenate(outcomes)
        child_roots = np.arange(len(parent_a)) if d == 1 else roots[parent_a]
        won = np.flatnonzero(outcome == A_WINS)
        if len(won):
            report.wins_by_depth[d + len(played)] = len(won)
            winning_roots.update(int(r) for r in child_roots[won])
            if report.shortest is None:
                w = won[np.argmax(value[won])]
                report.shortest = [*paths[parent_a[w]], chosen_a[w]]
        running = np.flatnonzero(outcome == ONGOING)
        if not len(running) or d == depth:
            break
        mem_print = _memory_print(new_memory)[parent_a[running]]
        key = np.concatenate([np.concatenate(prints)[running], mem_print], 1)
        _, first = np.unique(key, axis=0, return_index=True)
        unique = running[np.sort(first)]
        keep = unique[np.argsort(-value[unique], kind="stable")[:beam]]
        nxt, _, _ = _advance_chunk(advance, frontier, parent_a[keep], chosen_a[keep], b_actions)
        frontier = _take(nxt, np.arange(len(keep)))
        memory = _take(new_memory, parent_a[keep])
        paths = [np.concatenate([paths[parent_a[c]], chosen_a[c][None]]) for c in keep]
        roots = child_roots[keep]
    report.first_tick_winning = len(winning_roots)
    report.designed = len(line)
    # Replayed in a full chunk of copies: the program `_first_tick_with_line` plays, not another.
    result = play(sc, plans=np.repeat(line[None], CHUNK, 0))
    report.designed_wins = bool(result["outcome"][len(line) - 1, 0] == A_WINS)
    if not len(played):
        report.first_tick_with_line = _first_tick_with_line(sc, line, first_choices)
    report.seconds = time.perf_counter() - start
    return report


def main(argv: list[str] | None = None) -> None:
    """Command line: search one scenario and print the report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("scenario", nargs="?", help="id, name or .json file")
    parser.add_argument("--beam", type=int, default=16)
    parser.add_argument("--depth", type=int, default=None)
    parser.add_argument("--prefix", type=int, default=0, help="start after the line's first ticks")
    parser.add_argument("--doc", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.doc is not None:
        parser.error(f"--doc moved out of the engine: run python {PAGE_TOOL} --doc {args.doc}")
    if args.scenario is None:
        parser.error("give a scenario: an id, a name or a .json file")
    ref: Any = int(args.scenario) if args.scenario.isdigit() else args.scenario
    print(search(ref, beam=args.beam, depth=args.depth, prefix=args.prefix).summary())


if __name__ == "__main__":
    main()
