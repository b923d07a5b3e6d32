"""Fuzz: what a person can send. Random actions through `HumanGame.submit` are played exactly
when the mask allows them and refused by name otherwise (nothing played); random key and mouse
events never crash the BattleClient and never get an illegal action played; bad game settings
are refused by field name."""

from __future__ import annotations

import random

import numpy as np
import pygame
import pytest

from marl_bgs_clients.tdm.battle import COMPASS, BattleClient
from marl_bgs_clients.tdm.session import HumanGame
from marl_bgs_eval.errors import EvalError

pytestmark = pytest.mark.fuzz_family("BattleClient input")
HUMANS = [1, 8]
KEYS = [*COMPASS, pygame.K_u, pygame.K_n, pygame.K_v, pygame.K_RETURN, pygame.K_BACKSPACE,
        pygame.K_LSHIFT, pygame.K_TAB, pygame.K_F1, pygame.K_0]  # fmt: skip


@pytest.fixture(scope="module")
def game() -> HumanGame:
    """A long game on the open arena, so contact (and combat choices) come soon."""
    return HumanGame("tdm-beta", "tdm-alpha", humans=HUMANS, map_ref=0, tick_limit=400)


@pytest.mark.parametrize("seed", range(60))
def test_random_actions_are_played_or_refused(game, seed, record_property) -> None:
    rng = random.Random(seed)
    actions = {}
    for slot in HUMANS:
        _, masks = game.turn(slot)
        if rng.random() < 0.5:  # a legal one, drawn from the mask
            t, u = (int(v) for v in rng.choice(np.argwhere(masks.pair)))
            actions[slot] = (int(rng.choice(np.flatnonzero(masks.move))), t, u)
        else:  # anything, in or out of range
            actions[slot] = (rng.randint(-2, 10), rng.randint(-2, 12), rng.randint(-1, 2))
    legal = all(game.check(s, a) is None for s, a in actions.items())
    tick = game.tick
    if legal:
        game.submit(actions)
        assert game.tick == tick + 1
        last = game.replay().arrays["actions"][-1]
        for slot, action in actions.items():
            assert tuple(last[slot]) == action
        record_property("outcome", "accepted")
    else:
        with pytest.raises(EvalError, match=r"(move|combat) .*: not legal for slot \d; legal"):
            game.submit(actions)
        assert game.tick == tick
        record_property("outcome", "error")


@pytest.mark.parametrize("seed", range(20))
def test_random_events_never_play_an_illegal_action(game, seed, record_property, tmp_path) -> None:
    rng = random.Random(1000 + seed)
    client = BattleClient(game, out=tmp_path / "fuzz.replay.zip")
    w, h = client.size
    played = game.tick
    for _ in range(40):
        kind = rng.random()
        if kind < 0.6:
            event = pygame.event.Event(rng.choice([pygame.KEYDOWN, pygame.KEYUP]),
                                       key=rng.choice(KEYS), mod=0)  # fmt: skip
        else:
            pos = (rng.randint(-20, w + 20), rng.randint(-20, h + 20))
            event = pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=rng.randint(1, 5), pos=pos)
        assert client.handle(event)
        client.frame()
    for t in range(played, game.tick):  # everything played was legal for the person's slots
        a = game.replay().arrays
        for slot in HUMANS:
            move, target, ult = a["actions"][t, slot]
            assert a["masks.move"][t, slot, move]
            assert a["masks.pair"][t, slot, target, ult]
            assert not a["facts.move_rejected"][t, slot]
            assert not a["facts.combat_rejected"][t, slot]
    record_property("outcome", "accepted")


SETTINGS = [
    ({"humans": [-1]}, "humans"), ({"humans": [0, 10]}, "humans"), ({"humans": ()}, "humans"),
    ({"map_ref": 52}, "52"), ({"map_ref": "nowhere"}, "nowhere"), ({"roster_a": ""}, "roster"),
    ({"roster_b": "MWHRPM"}, "roster"), ({"tick_limit": 10_001}, "tick_limit"),
    ({"winning_score": 0}, "winning_score"), ({"red_zone_depth": -1.0}, "red_zone_depth"),
    ({"shield_ticks": 31}, "shield_ticks"), ({"wave_period": 0}, "wave_period"),
    ({"mystery": 1}, "mystery"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "field"), SETTINGS)
def test_bad_settings_are_refused_by_name(change, field, record_property) -> None:
    kwargs = {"humans": [0], **change}
    with pytest.raises(EvalError, match=field):
        HumanGame("tdm-alpha", "tdm-beta", **kwargs)
    record_property("outcome", "error")
