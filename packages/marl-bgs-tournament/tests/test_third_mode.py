"""The acid test of the mode kits (issue 43): a third mode, written only here, is registered
through the public API and then played by Systems, evaluated, rated, recorded, replayed, drawn
to a GIF, exported as a System file and trained by the baselines, with no edit anywhere else.
docs/architecture.md's "Adding a mode" walks through this module.

The mode: a duel on a line of cells. Two gunners start at opposite ends; each tick each one
stays, steps toward the other (legal while more than two cells apart, so both stepping
at once never meet), steps away, or shoots (legal within two cells). A hit costs one
of three health; the game ends when a gunner falls or at the tick limit (a draw). Two arenas
(layouts) differ in length.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import imageio.v3 as iio
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pygame
import pytest
from typer.testing import CliRunner

import marl_bgs
import marl_bgs_clients.modes
import marl_bgs_eval as ev
import marl_bgs_train.modes
from marl_bgs import BatchedEnv, Layouts, ModeKit, ModeSpec
from marl_bgs.core.conformance import check_env
from marl_bgs.core.mode import OneHead
from marl_bgs.core.pool import make_pool
from marl_bgs.core.pytree import PyTree, batch_states, pytree_dataclass
from marl_bgs_eval import episode_replays, replay_files
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.modes import EvalParts
from marl_bgs_tournament.portable import export_system, load_system
from marl_bgs_train import OpponentMix, PPOConfig, train_run
from marl_bgs_train.heads import flat_heads
from marl_bgs_train.modes import TrainParts

ARENAS = {"short": 7, "long": 11}  # layout name -> cells
HEALTH, REACH, STAY, TOWARD, AWAY, SHOOT = 3, 2, 0, 1, 2, 3


@pytree_dataclass
class DuelState(PyTree):
    pos: jax.Array  # int32 [2]: cell of each gunner
    health: jax.Array  # int32 [2]
    length: jax.Array  # int32 []: cells of the arena
    tick_limit: jax.Array  # int32 []
    tick: jax.Array  # int32 []
    outcome: jax.Array  # int32 []: 0 running, 1 first wins, 2 second wins, 3 draw
    episode: jax.Array  # int32 []


@pytree_dataclass
class DuelMasks(PyTree):
    flat: jax.Array  # bool [2, 4]


@pytree_dataclass
class DuelFacts(PyTree):
    accepted: jax.Array  # int32 [2]
    hit: jax.Array  # bool [2]: this gunner's shot landed


SPEC = ModeSpec(id="duel-v1", agents=("first", "second"), teams=((0,), (1,)),
                action_heads=(4,), obs_size=5, state_size=5, head_names=("action",))  # fmt: skip


@dataclass(frozen=True)
class Duel(OneHead):
    """The duel's rules as a `marl_bgs.Mode` (no static settings)."""

    spec: ModeSpec = SPEC

    def start(self, key: jax.Array, state: DuelState) -> DuelState:
        return state

    def _gap(self, s: DuelState) -> jax.Array:
        return jnp.abs(s.pos[0] - s.pos[1])

    def masks(self, s: DuelState) -> DuelMasks:
        ahead = jnp.sign(s.pos[::-1] - s.pos)  # the step toward the other gunner
        away = s.pos - ahead
        legal = jnp.stack([jnp.ones(2, bool), jnp.full(2, self._gap(s) > 2),
                           (away >= 0) & (away < s.length), jnp.full(2, self._gap(s) <= REACH)],
                          axis=1)  # fmt: skip
        return DuelMasks(flat=legal & (s.health > 0)[:, None] | (jnp.arange(4) == STAY))

    def transition(self, s: DuelState, actions: jax.Array, messages: Any = None) -> Any:
        act = actions[:, 0]
        act = jnp.where(self.masks(s).flat[jnp.arange(2), act], act, STAY)  # repair: stay
        ahead = jnp.sign(s.pos[::-1] - s.pos)
        pos = s.pos + jnp.where(act == TOWARD, ahead, 0) - jnp.where(act == AWAY, ahead, 0)
        hit = act == SHOOT
        health = jnp.maximum(s.health - hit[::-1].astype(jnp.int32), 0)
        tick = s.tick + 1
        down = health == 0
        outcome = jnp.select([down[0] & down[1], down[1], down[0], tick >= s.tick_limit],
                             [3, 1, 2, 3], 0)  # fmt: skip
        running = s.outcome == 0
        nxt = s.replace(pos=pos, health=health, tick=tick, outcome=outcome.astype(jnp.int32))
        nxt = jax.tree.map(lambda n, o: jnp.where(running, n, o), nxt, s)
        return nxt, DuelFacts(accepted=jnp.where(running, act, STAY), hit=hit & running)

    def reward(self, s: DuelState, nxt: DuelState, facts: DuelFacts) -> jax.Array:
        won = jnp.array([nxt.outcome == 1, nxt.outcome == 2], jnp.float32)
        lost = jnp.array([nxt.outcome == 2, nxt.outcome == 1], jnp.float32)
        return jnp.where(s.outcome == 0, won - lost, 0.0)

    def truncated(self, s: DuelState) -> jax.Array:
        return (s.outcome == 3) & (s.tick >= s.tick_limit) & jnp.all(s.health > 0)

    def observe_agents(self, s: DuelState, full: bool = False) -> tuple[jax.Array, ...]:
        def row(me: int) -> jax.Array:  # in each gunner's own frame: it starts on the left
            x = s.pos if me == 0 else s.length - 1 - s.pos
            them = 1 - me
            seen = [x[me] / s.length, x[them] / s.length, s.health[me] / HEALTH,
                    s.health[them] / HEALTH, s.tick / s.tick_limit]  # fmt: skip
            return jnp.stack(seen).astype(jnp.float32)

        return row(0), row(1)

    def observe(self, s: DuelState, full: bool = False) -> jax.Array:
        return jnp.stack(self.observe_agents(s, full))

    def views(self, s: DuelState) -> jax.Array:
        return self.observe(s)

    def observation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(5, np.float32), np.ones(5, np.float32)

    def agent_facts(self, facts: DuelFacts) -> dict[str, jax.Array]:
        return {"hits": facts.hit.astype(jnp.float32)}

    def tick_invariants(self, s: DuelState, nxt: DuelState, facts: DuelFacts) -> dict[str, Any]:
        return {
            "health never rises": jnp.all(nxt.health <= s.health),
            "gunners stay in the arena": jnp.all((nxt.pos >= 0) & (nxt.pos < s.length)),
            "gunners never share a cell": nxt.pos[0] != nxt.pos[1],
        }


def _start(length: int, swapped: bool, tick_limit: int) -> DuelState:
    pos = [length - 1, 0] if swapped else [0, length - 1]
    i32 = lambda v: jnp.asarray(v, jnp.int32)  # noqa: E731
    return DuelState(
        pos=i32(pos), health=i32([HEALTH, HEALTH]), length=i32(length),
        tick_limit=i32(tick_limit), tick=i32(0), outcome=i32(0), episode=i32(0),
    )  # fmt: skip


def make_duel(*, arena: Any = "short", num_envs: int = 1, tick_limit: int = 30,
              spawn_swap: str = "half", reward_fn: Any = None, mesh: Any = None,
              mesh_axis: Any = None) -> BatchedEnv:  # fmt: skip
    """The duel with `num_envs` games on `arena` ("short", "long" or a list of them)."""
    names = [arena] if isinstance(arena, str) else list(arena)
    bad = [a for a in names if a not in ARENAS]
    if bad or not names:
        raise marl_bgs.ConfigError(f"arena: unknown {bad or names}; allowed {list(ARENAS)}")
    sides = [batch_states([_start(ARENAS[a], s, tick_limit) for a in names]) for s in (0, 1)]
    return BatchedEnv(Duel(), make_pool(*sides), num_envs=num_envs, spawn_swap=spawn_swap,
                      reward_fn=reward_fn, mesh=mesh, mesh_axis=mesh_axis)  # fmt: skip


class DuelParts(EvalParts):
    """What evaluation needs beyond the defaults: nothing (the replay schema is a field)."""


CELL = 40  # pixels a cell


class DuelDrawing(marl_bgs_clients.modes.ReplayDrawing):
    """The clients' picture of a duel tick: the cells, each gunner with its health as pips."""

    def size(self, replay: Replay) -> tuple[int, int]:
        return int(replay.arrays["state.length"][0]) * CELL, 2 * CELL

    def draw(self, surface: pygame.Surface, replay: Replay, tick: int, observer: int | None = None,
             selected: int | None = None) -> None:  # fmt: skip
        del observer, selected
        surface.fill((250, 250, 250))
        for cell in range(surface.get_width() // CELL):
            pygame.draw.rect(surface, (200, 200, 200), (cell * CELL, CELL, CELL, CELL), 1)
        pos, health = (replay.arrays[f"state.{k}"][tick] for k in ("pos", "health"))
        for who, colour in enumerate([(40, 90, 200), (200, 50, 40)]):
            centre = (int(pos[who]) * CELL + CELL // 2, CELL + CELL // 2)
            pygame.draw.circle(surface, colour, centre, CELL // 3)
            for pip in range(int(health[who])):
                pygame.draw.rect(surface, colour, (centre[0] - 15 + 11 * pip, 8 + 20 * who, 8, 8))


KIT = marl_bgs.register_kit(
    ModeKit(
        id="duel-v1",
        alias="duel",
        build=make_duel,
        layouts=Layouts(keyword="arena", catalog=lambda: list(ARENAS)),
        outcomes=("running", "first wins", "second wins", "draw"),
    )
)
# Its games are recorded as episode replays (the engine replays them when a file is loaded).
ev.modes.register("duel", DuelParts(replay=episode_replays.episode_schema()))
marl_bgs_clients.modes.PARTS.register("duel", DuelDrawing())


@dataclass(frozen=True)
class DuelGame:
    """The games a duel learner trains on (a training config's `game` section)."""

    arena: tuple[str, ...] = ("short", "long")
    tick_limit: int = 30


def _training_games(
    game: DuelGame, num_envs: int, gamma: float, mesh: jax.sharding.Mesh | None
) -> BatchedEnv:
    del gamma  # the duel's own reward: +1 win, -1 loss
    return marl_bgs.make("duel", arena=list(game.arena), num_envs=num_envs,
                         tick_limit=game.tick_limit, mesh=mesh)  # fmt: skip


marl_bgs_train.modes.register("duel", TrainParts(
    settings=DuelGame, build_env=_training_games, layout_setting="arena",
    heads={"flat": flat_heads(4, Duel().unflatten_actions, Duel().flatten_actions)},
))  # fmt: skip


def _closer(keys: jax.Array, memory: Any, inputs: Any) -> tuple[jax.Array, Any]:
    """Shoot when in reach, else step toward the other gunner."""
    can = inputs.masks.flat
    choice = jnp.where(can[..., SHOOT], SHOOT, jnp.where(can[..., TOWARD], TOWARD, STAY))
    return choice[..., None], memory


CLOSER = ev.system(_closer, name="closer", mode="duel")
SETTINGS = {"mode": "duel", "maps": "all", "games_per_map": 4, "batch_size": 4, "metrics": "none"}


@pytest.fixture(scope="module")
def games() -> pd.DataFrame:
    return pd.concat([ev.evaluate(CLOSER, "random", **SETTINGS),
                      ev.evaluate("random", "idle", **SETTINGS, first_game=100)])  # fmt: skip


def test_the_third_mode_is_a_conforming_env():
    env = marl_bgs.make("duel", arena=["short", "long"], num_envs=4)
    check_env(env, ticks=12, jit=False)
    assert marl_bgs.kit("duel-v1") is KIT


def test_systems_play_it_and_evaluation_records_it(games: pd.DataFrame) -> None:
    first = games[games["system_a"] == "closer"]
    assert list(first.columns[:5]) == ["game", "pair_id", "seed_number", "seed", "mode"]
    assert set(games["mode"]) == {"duel-v1"}
    assert set(first["map_name"]) == {"short", "long"}
    assert [c for c in games.columns if "slot" in c] == ["system_a_slot0", "system_b_slot0"]
    assert (first["result"] == "win").mean() > 0.5  # closing in and shooting beats random
    assert ev.results.validate(games).equals(ev.results.normalize(games))


def test_it_is_rated_with_intervals(games: pd.DataFrame) -> None:
    table = ev.rate(games, bootstrap=50, seed=0).set_index("system")
    assert set(table.index) == {"closer", "random", "idle"}
    assert table.loc["closer", "elo"] > table.loc["idle", "elo"]


def test_it_is_recorded_replayed_and_drawn_to_a_gif(tmp_path: Path) -> None:
    (replay,) = episode_replays.record([CLOSER, ev.random_system("duel")], jax.random.key(3),
                                       mode="duel", settings={"arena": "long"}, games=[1],
                                       system="closer vs random")  # fmt: skip
    path = replay_files.save(replay, tmp_path / "duel.replay.zip")
    back = replay_files.load(path)  # checked, then replayed by the engine tick by tick
    assert (back.header["mode"], back.header["system"]) == ("duel-v1", "closer vs random")
    assert back.header["outcome"] in (1, 2, 3)
    assert back.ticks == replay.ticks > 3
    states, facts = episode_replays.history(back)
    assert (states.pos.shape, facts.hit.shape) == ((back.ticks + 1, 2), (back.ticks, 2))
    assert states.pos[0].tolist() in ([0, 10], [10, 0])  # the long arena, from either end
    # Each team was played by its own policy: the first gunner exactly as `_closer` decides.
    can, acts = back.arrays["masks.flat"], back.arrays["actions"][..., 0]
    closer = np.where(can[..., SHOOT], SHOOT, np.where(can[..., TOWARD], TOWARD, STAY))
    np.testing.assert_array_equal(acts[:, 0], closer[:, 0])
    assert (acts[:, 1] != closer[:, 1]).any()  # the second gunner plays at random
    swapped = np.where(back.arrays["actions"] == SHOOT, STAY, SHOOT).astype(np.int32)
    edited = Replay(header=back.header, arrays={**back.arrays, "actions": swapped})
    with pytest.raises(ev.EvalError, match=r"differs from what the engine gives"):
        episode_replays.verify(edited)
    # Drawn by the mode's drawing through the clients' own command line, no window.
    from marl_bgs_clients.cli import app

    gif = tmp_path / "duel.gif"
    done = CliRunner().invoke(app, ["export", str(path), "--out", str(gif)])
    assert done.exit_code == 0, done.output
    frames = iio.imread(gif, index=None)
    assert frames.shape[0] == back.ticks + 1
    assert len({f.tobytes() for f in frames}) > 1  # the gunners move and lose health


def test_it_is_exported_as_a_system_file_that_plays_as_the_original(
    games: pd.DataFrame, tmp_path: Path
) -> None:
    manifest = export_system(CLOSER, tmp_path / "closer.mbgs", team="lab", batch_sizes=(4,))
    assert manifest["mode"] == "duel-v1"
    loaded = load_system(tmp_path / "closer.mbgs")
    assert loaded.mode == "duel-v1"
    want = games[games["system_a"] == "closer"].reset_index(drop=True)
    pd.testing.assert_frame_equal(ev.evaluate(loaded, "random", **SETTINGS), want)


def test_the_baselines_train_on_it_and_the_run_is_a_system(tmp_path: Path) -> None:
    # Feedforward IPPO in self-play (with the current weights and saved copies as team B).
    config = PPOConfig(
        mode="duel", recurrent=False, num_envs=8, rollout=8, total_steps=256, hidden=16,
        epochs=1, minibatches=2, opponents=OpponentMix(current=0.5, copies=0.5, frozen=0.0,
        scripted=0.0, num_copies=2, copy_every=64),
    )  # fmt: skip
    logged: list[dict[str, float]] = []
    state = train_run(config, tmp_path, progress=False, on_update=logged.append)
    assert int(state.steps) == 256
    assert len(logged) == 4
    assert sum(row["games"] for row in logged) > 0  # games ended and restarted inside the run
    assert all(row["repaired_actions"] == 0 for row in logged)  # the masks hold: all legal
    games = ev.evaluate(f"ckpt:{tmp_path}", "random", **SETTINGS)
    assert set(games["mode"]) == {"duel-v1"}
    assert len(games) == 8
