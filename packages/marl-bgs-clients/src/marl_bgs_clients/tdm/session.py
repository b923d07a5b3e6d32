"""A game in which a person chooses the actions of some slots, tick by tick, and Systems play the
rest: the BattleClient's game, without the window.

    game = HumanGame("tdm-alpha", "tdm-beta", humans=[2], map_ref=47, tick_limit=40)
    while not game.done:
        view, mask = game.turn(2)             # exactly what agent 2 may know, and its choices
        game.submit({2: (3, 0, 0)})           # move east, no combat (own frame, checked)
    replay = game.replay()        # a replay like any other: replays.save, verify, metrics

Each tick is evaluation's own tick (`marl_bgs_eval.play.play_tick`) with the person's actions fixed
in their slots, keys drawn from (seed, seed number, tick, team) as evaluation draws them, so the
Systems play as they would in an evaluation game. The team's System still chooses for the person's
slots (what it would have done); the person's action replaces it. A choice the mask forbids is
refused with the legal alternatives, never repaired.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import marl_bgs
from marl_bgs import ConfigError, team_inputs
from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.tdm.actions import COMBAT_NAMES
from marl_bgs.tdm.config import LIMITS
from marl_bgs.tdm.maps import CUSTOM_MAP_ID
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.evaluate import as_system, resolve_maps
from marl_bgs_eval.play import HUMAN, join_teams, play_tick
from marl_bgs_eval.replay_files import named_leaves
from marl_bgs_eval.seeds import memory_keys, root_key
from marl_bgs_eval.systems import System
from marl_bgs_eval.tdm import replays
from marl_bgs_eval.tdm.replays import tick_record
from marl_bgs_eval.tdm.results import roster_text

Action = tuple[int, int, int]  # (move, target, ultimate), own frame


@functools.cache
def _programs(team_a: System, team_b: System, shared_sight: bool) -> tuple[Callable, Callable]:
    """The jitted (tick, inputs) of a one-game env; maps, rosters, rules and the person's slots
    (`which`, bool [1, 10]) are data, so every game with these Systems shares one compile."""
    env = marl_bgs.make("tdm", num_envs=1, shared_sight=shared_sight)
    team_a, team_b = team_a.bind(team_a.params), team_b.bind(team_b.params)

    def tick(
        state: Any, memories: Any, given: jax.Array, which: jax.Array, root: jax.Array,
        seeds: jax.Array,
    ) -> Any:  # fmt: skip
        fixed = (given, which)
        t = play_tick(env, (team_a, team_b), root, seeds, state, memories, fixed)
        return t.state, t.memories, tick_record(t)

    return jax.jit(tick), jax.jit(lambda s: join_teams(*team_inputs(env, s)))


def _slots(humans: Iterable[int]) -> tuple[int, ...]:
    out = tuple(sorted({int(s) for s in humans}))
    if not out or any(not 0 <= s <= 9 for s in out):
        raise EvalError(f"humans: expected one or more slots in [0, 9], got {list(humans)}")
    return out


class HumanGame:
    """One game: Systems `team_a` and `team_b`, with a person choosing for slots `humans` (0-4
    team A, 5-9 team B). `rules`: the engine's rule keywords (`tick_limit`, `shared_sight`, ...)."""

    def __init__(
        self, team_a: System | str, team_b: System | str, humans: Iterable[int],
        map_ref: Any = 47, roster_a: str = "MWHRP", roster_b: str = "MWHRP", seed: int = 0,
        seed_number: int = 0, game: int = 0, a_right: bool = False, **rules: Any,
    ) -> None:  # fmt: skip
        self.teams = (as_system(team_a, "team_a"), as_system(team_b, "team_b"))
        self.humans = _slots(humans)
        self.spec = resolve_maps([map_ref])[0]
        try:
            env = marl_bgs.make(
                "tdm", map_id=[self.spec], rosters=[(roster_a, roster_b)], num_envs=1, **rules
            )
        except ConfigError as err:
            raise EvalError(str(err)) from None
        classes = np.asarray(env.rosters)[0]
        empty = [s for s in self.humans if classes[s] == 0]
        if empty:
            raise EvalError(f"humans: slot(s) {empty} hold no unit in rosters "
                            f"{roster_a!r} / {roster_b!r}")  # fmt: skip
        for t, s in enumerate(self.teams):
            theirs = [k for k in range(5 * t, 5 * t + 5) if classes[k] and k not in self.humans]
            reason = s.problem(classes[5 * t : 5 * t + 5])
            if reason and theirs:  # a System that plays no unit may not know the classes
                raise EvalError(f"team_{'ab'[t]}: {reason}")
        self.env, self.shared_sight = env, bool(env.shared_sight)
        self.row = {
            "game": int(game), "seed": int(seed), "seed_number": int(seed_number),
            "a_spawn": "right" if a_right else "left",
            "roster_a": roster_text(classes[:5]), "roster_b": roster_text(classes[5:]),
        }  # fmt: skip
        self.state = env.start_games(np.zeros(1, int), np.zeros(1, int), np.asarray([a_right]))
        self._start = jax.tree.map(np.asarray, named_leaves("state", self.state))
        root, seeds = root_key(seed), jnp.asarray([seed_number], jnp.int32)
        games = jnp.asarray([game], jnp.int32)
        self.memories = tuple(
            jax.vmap(s.bind(s.params).init)(memory_keys(root, seeds, games, t))
            for t, s in enumerate(self.teams)
        )
        self._tick, self._inputs = _programs(*self.teams, self.shared_sight)
        self._which = np.zeros((1, 10), bool)
        self._which[0, list(self.humans)] = True
        self._root, self._seeds = root, seeds
        self._records: list[dict[str, np.ndarray]] = []
        self._now = jax.tree.map(np.asarray, self._inputs(self.state))

    @property
    def done(self) -> bool:
        """Whether the game has ended."""
        return bool(np.asarray(self.state.outcome)[0] != 0)

    @property
    def tick(self) -> int:
        """Ticks played so far."""
        return int(np.asarray(self.state.tick)[0])

    def oracle(self) -> Any:
        """The whole current state of the game (numpy, no batch axis)."""
        return jax.tree.map(lambda x: np.asarray(x)[0], self.state)

    def turn(self, slot: int) -> tuple[Any, Any]:
        """(view, masks) of agent `slot` now: its permitted `AgentView` and its legal actions."""
        if slot not in self.humans:
            raise EvalError(f"slot: {slot} is not played by the person; humans are {self.humans}")
        return jax.tree.map(lambda x: x[0, slot], (self._now.views, self._now.masks))

    def check(self, slot: int, action: Action) -> str | None:
        """Why `action` is not legal for agent `slot` now, or None."""
        _, masks = self.turn(slot)
        move, target, ult = (int(a) for a in action)
        if not 0 <= move < len(MOVE_NAMES) or not masks.move[move]:
            legal = [MOVE_NAMES[m] for m in np.flatnonzero(masks.move)]
            return f"move {move}: not legal for slot {slot}; legal moves {legal}"
        if not (0 <= target < masks.pair.shape[0] and 0 <= ult < 2) or not masks.pair[target, ult]:
            legal = [COMBAT_NAMES[t][u] for t, u in zip(*np.nonzero(masks.pair), strict=True)]
            return f"combat ({target}, {ult}): not legal for slot {slot}; legal {legal}"
        return None

    def submit(self, actions: dict[int, Action]) -> None:
        """Play one tick with the person's action for every human slot (own frame)."""
        if self.done:
            raise EvalError("the game is over")
        if sorted(actions) != list(self.humans):
            raise EvalError(f"actions: expected one action for each of slots {list(self.humans)}, "
                            f"got slots {sorted(actions)}")  # fmt: skip
        given = np.zeros((1, 10, 3), np.int32)
        for slot, action in actions.items():
            problem = self.check(slot, action)
            if problem:
                raise EvalError(problem)
            given[0, slot] = action
        self.state, self.memories, record = self._tick(
            self.state, self.memories, given, self._which, self._root, self._seeds
        )
        self._records.append(jax.tree.map(lambda x: np.asarray(x)[0], record))
        self._now = jax.tree.map(np.asarray, self._inputs(self.state))

    def replay(self) -> Replay:
        """The game so far as a replay (`HUMAN` is the leaf of the person's slots)."""
        if not self._records:
            raise EvalError("no tick has been played yet")
        per_tick = {k: np.stack([r[k] for r in self._records]) for k in self._records[0]}
        start = {k: v[0] for k, v in self._start.items()}
        final = {k: np.asarray(v)[0] for k, v in named_leaves("state", self.state).items()}
        replay = replays.assemble(
            self.row, self.spec, self.teams, self.shared_sight, start, per_tick, final
        )
        header = dict(replay.header)
        for t, side in enumerate("ab"):
            mine = [s for s in self.humans if s // 5 == t]
            if mine:
                header[f"leaves_{side}"] = [*header[f"leaves_{side}"], HUMAN]
                name = self.teams[t].name
                header[f"system_{side}"] = HUMAN if len(mine) == 5 else f"{HUMAN}+{name}"
        return Replay(header=header, arrays=replay.arrays)


def replay_game(replay: Replay, humans: Iterable[int], map_ref: Any = None) -> HumanGame:
    """The game of `replay` from its start, with a person in slots `humans`: the same Systems
    (by their registered names; a person's earlier slots are played by the team's System, or by
    `idle` when a person played all five), map, rosters, spawn ends, seeds and limits. A custom
    map needs its file or MapSpec as `map_ref`."""
    h = replay.header
    if map_ref is None and h["map"] == CUSTOM_MAP_ID:
        raise EvalError(f"map_ref: game {h['game']} was played on custom map {h['map_name']!r}; "
                        "pass its file or MapSpec")  # fmt: skip
    names = [h[f"system_{side}"] for side in "ab"]
    names = ["idle" if n == HUMAN else n.removeprefix(f"{HUMAN}+") for n in names]
    return HumanGame(
        *names, humans, map_ref=h["map"] if map_ref is None else map_ref,
        roster_a=h["roster_a"], roster_b=h["roster_b"], seed=h["seed"],
        seed_number=h["seed_number"], game=h["game"], a_right=h["a_spawn"] == "right",
        shared_sight=h["shared_sight"], **{k: h[k] for k in LIMITS},
    )  # fmt: skip
