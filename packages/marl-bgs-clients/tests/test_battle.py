"""The BattleClient and its game: scripted keys and clicks play a whole short game; only legal
choices are taken; undo; the game is saved as a replay the engine reproduces, and measured."""

from __future__ import annotations

import numpy as np
import pygame
import pytest

from marl_bgs.core.arena import MIRROR_MOVE
from marl_bgs.tdm.tables import RELATIVE_INDEX
from marl_bgs_clients.canvas import SELECTED, pixels
from marl_bgs_clients.tdm.battle import BattleClient
from marl_bgs_clients.tdm.key import key_rect, key_strip
from marl_bgs_clients.tdm.session import HumanGame, replay_game
from marl_bgs_clients.tdm.shots import follow
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.tdm import replays

EAST, WEST = 3, 4


def _key(k: int, mod: int = 0) -> pygame.event.Event:
    return pygame.event.Event(pygame.KEYDOWN, key=k, mod=mod)


def _crop(image: np.ndarray, rect: pygame.Rect) -> np.ndarray:
    return image[rect.top : rect.bottom, rect.left : rect.right]


def _click(pos: tuple[int, int], button: int = 1) -> pygame.event.Event:
    return pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=button)


def test_scripted_input_plays_a_whole_game(tmp_path) -> None:
    """Two people (a_0 and b_2) press 'east' and Enter every tick; b_2's team starts on the
    right, so its own-frame action is west. One undo on the way."""
    game = HumanGame("tdm-alpha", "tdm-beta", humans=[0, 7], map_ref=47, tick_limit=6)
    client = BattleClient(game, out=tmp_path / "mine.replay.zip")
    client.handle(_key(pygame.K_d))
    client.handle(_key(pygame.K_RETURN))
    assert (client.current, client.chosen) == (7, {0: (EAST, 0, 0)})
    client.handle(_key(pygame.K_BACKSPACE))  # reopen a_0's turn
    assert (client.current, client.chosen) == (0, {})
    masks = {}  # (tick, slot) -> the move mask the person's turn had
    while not game.done:
        slot = client.current
        masks[game.tick, slot] = np.asarray(game.turn(slot)[1].move)
        client.handle(_key(pygame.K_d))
        client.handle(_key(pygame.K_RETURN))
    assert game.tick == 6
    assert client.saved == tmp_path / "mine.replay.zip"
    assert client.saved is not None
    replay = replays.load(client.saved)
    replays.verify(replay)  # the engine reproduces every state from the recorded actions
    acts = replay.arrays["actions"]
    own_east = {0: EAST, 7: int(MIRROR_MOVE[EAST])}
    assert own_east[7] == WEST
    for t in range(6):
        for slot in (0, 7):
            mask = masks.get((t, slot))  # absent: a turn with nothing to choose was skipped
            want = own_east[slot] if mask is not None and mask[own_east[slot]] else 0
            assert acts[t, slot, 0] == want, (t, slot)
    h = replay.header
    assert (h["system_a"], h["system_b"]) == ("human+tdm-alpha", "human+tdm-beta")
    assert h["leaves_a"] == ["tdm-alpha", "human"]
    who = replay.arrays["who"]
    assert (who[:, 0] == 1).all()
    assert (who[:, 7] == 1).all()
    assert (who[:, 1] == 0).all()
    table = replays.metrics(replay)
    assert len(table) == 6
    assert not client.handle(_key(pygame.K_q))


def test_only_legal_choices_are_taken_and_shown(tmp_path) -> None:
    """Walk a Hunter east until it has a legal target: the target is ringed, a click takes it,
    a click on a unit it may not hit changes nothing and says why."""
    game = HumanGame("tdm-alpha", "tdm-beta", humans=[2], map_ref=0, tick_limit=60)  # open
    client = BattleClient(game, out=tmp_path / "battle.replay.zip")
    far = client.scene()
    enemy = far.unit(7)
    assert enemy is None  # not seen at the start: the POV does not draw it
    client.oracle = True
    enemy = client.scene().unit(7)
    assert enemy is not None
    client.handle(_click(client.layout.to_px(enemy.x, enemy.y)))
    assert client.draft.target is None
    assert client.message == "no legal Basic on b_2"
    client.oracle = False
    while not client.legal_targets(False) and not game.done:
        client.choose_move(EAST)
        client.commit()
    targets = client.legal_targets(False)
    assert targets, "the Hunter met an enemy in range"
    _, masks = game.turn(2)
    assert targets == [j for j in range(10) if masks.pair[RELATIVE_INDEX[2, j], 0]]
    target = client.scene().unit(targets[0])
    assert target is not None
    frame = pixels(client.frame())
    cx, cy = client.layout.to_px(target.x, target.y)
    r = client.layout.length(0.5)
    ring = frame[cy - r - 8 : cy + r + 8, cx - r - 8 : cx + r + 8]
    assert np.all(ring == np.asarray(SELECTED), axis=-1).sum() > 30  # the legal target is ringed
    client.handle(_click((cx, cy)))
    assert (client.draft.target, client.draft.ultimate) == (targets[0], False)
    _move, rel, ult = client.action()
    assert masks.pair[rel, ult]
    illegal = [m for m in range(9) if m not in client.legal_moves()]
    for m in illegal:
        assert not client.choose_move(m)
    client.handle(_key(pygame.K_n))
    assert client.draft.target is None
    client.handle(_key(pygame.K_v))
    assert client.scene().observer is None


def test_the_game_refuses_what_the_mask_forbids() -> None:
    game = HumanGame("tdm-alpha", "tdm-beta", humans=[2], map_ref=47, tick_limit=10)
    with pytest.raises(
        EvalError, match=r"combat \(6, 0\): not legal for slot 2; legal \['no_combat'\]"
    ):
        game.submit({2: (0, 6, 0)})
    with pytest.raises(EvalError, match=r"move 9: not legal for slot 2"):
        game.submit({2: (9, 0, 0)})
    with pytest.raises(EvalError, match=r"actions: expected one action for each of slots \[2\]"):
        game.submit({3: (0, 0, 0)})
    with pytest.raises(EvalError, match=r"slot: 4 is not played by the person"):
        game.turn(4)
    with pytest.raises(EvalError, match="no tick has been played yet"):
        game.replay()
    assert game.tick == 0  # nothing was played by the refusals


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"humans": []}, r"humans: expected one or more slots in \[0, 9\]"),
        ({"humans": [10]}, r"humans: expected one or more slots in \[0, 9\], got \[10\]"),
        ({"humans": [0], "map_ref": 99}, "99"),
        ({"humans": [0], "roster_a": "MXQ"}, "roster"),
        ({"humans": [0], "tick_limit": 0}, "tick_limit"),
    ],
)
def test_bad_settings_are_refused_by_name(kwargs, message) -> None:
    with pytest.raises(EvalError, match=message):
        HumanGame("tdm-alpha", "tdm-beta", **kwargs)


def test_a_person_who_chooses_as_the_system_did_plays_the_evaluation_game(demo, tmp_path) -> None:
    """Through the client's own choices, a person repeats what TDM-Alpha chose for its Hunter:
    the game is the evaluation's game, state by state (only `who` differs)."""
    game = replay_game(demo, humans=[2])
    client = BattleClient(game, out=tmp_path / "followed.replay.zip")
    follow(client, demo, demo.ticks)
    assert client.saved == tmp_path / "followed.replay.zip"
    assert game.done
    mine = game.replay()
    assert mine.arrays.keys() == demo.arrays.keys()
    for name, want in demo.arrays.items():
        if name != "who":
            assert np.array_equal(mine.arrays[name], want), name
    assert (mine.arrays["who"][:, 2] == 1).all()
    assert mine.header["system_a"] == "human+tdm-alpha"
    assert {k: v for k, v in mine.header.items() if k not in ("system_a", "leaves_a")} == {
        k: v for k, v in demo.header.items() if k not in ("system_a", "leaves_a")
    }


def test_undo_reopens_the_earlier_turn_with_its_choices(tmp_path) -> None:
    game = HumanGame("tdm-alpha", "tdm-beta", humans=[0, 2], map_ref=47, tick_limit=10)
    client = BattleClient(game, out=tmp_path / "battle.replay.zip")
    client.handle(_key(pygame.K_e))  # northeast
    client.handle(_key(pygame.K_RETURN))
    assert client.current == 2
    client.handle(_key(pygame.K_BACKSPACE))
    assert (client.current, client.draft.move, client.chosen) == (0, 5, {})
    client.handle(_key(pygame.K_BACKSPACE))
    assert client.draft.move == 0


def test_a_game_closed_early_is_saved_unfinished(tmp_path) -> None:
    game = HumanGame("tdm-alpha", "random", humans=[5], map_ref=12, tick_limit=30)
    client = BattleClient(game, out=tmp_path / "early.replay.zip")
    assert client.save() is None  # nothing played yet
    for _ in range(3):
        client.handle(_key(pygame.K_s))
        client.handle(_key(pygame.K_RETURN))
    assert client.save() == tmp_path / "early.replay.zip"
    replay = replays.load(tmp_path / "early.replay.zip")
    assert (replay.header["result"], replay.ticks) == ("unfinished", 3)
    replays.verify(replay)
    assert replay.header["system_b"] == "human+random"


def test_a_small_roster_and_empty_slots(tmp_path) -> None:
    with pytest.raises(EvalError, match=r"humans: slot\(s\) \[4\] hold no unit in rosters 'MW'"):
        HumanGame("tdm-alpha", "tdm-beta", humans=[4], roster_a="MW", map_ref=12)
    game = HumanGame("idle", "tdm-beta", humans=[0, 1], roster_a="MW", map_ref=12, tick_limit=3)
    client = BattleClient(game, out=tmp_path / "battle.replay.zip")
    while not game.done:
        client.handle(_key(pygame.K_d))
        client.handle(_key(pygame.K_RETURN))
    shown = {u.slot for u in client.scene().units}
    assert not shown & {2, 3, 4}
    for u in client.scene().units:
        assert u.class_id > 0


def test_the_battle_client_shows_and_hides_the_key_with_l(demo, tmp_path) -> None:
    client = BattleClient(replay_game(demo, humans=[2]), out=tmp_path / "b.replay.zip")
    plain = pixels(client.frame())
    client.handle(_key(pygame.K_l))
    rect = key_rect(pygame.Rect((0, 0), client.layout.size))
    assert np.array_equal(_crop(pixels(client.frame()), rect), pixels(key_strip(rect.width)))
    client.handle(_key(pygame.K_l))
    assert np.array_equal(pixels(client.frame()), plain)
    assert client.draft.move == 0  # L chose nothing
