"""The BattleClient: a person plays some slots, turn-based, alongside or against any Systems.

    marl-bgs-clients play tdm-alpha tdm-beta --human 0 --human 2 --map 47 --out mine.replay.zip

The game waits for the person. For each of the person's agents in turn the window shows that
agent's POV (V switches to the Oracle view), its ranges, the legal moves as arrows around it and
its legal targets ringed; the person builds the agent's turn:

- move: Q W E / A S D / Z X C is a compass on the screen (S: stay), or right-click a point;
- combat: left-click a ringed unit (a Basic; hold Shift or press U first for the Ultimate), U
  then Enter on an untargeted Ultimate (Burst), N for no combat;
- Enter commits the turn and moves on to the next agent (after the last one the tick is played),
  Backspace undoes the current choices, or reopens the previous agent's turn of this tick;
- L shows or hides the key (what the letters, badges, rings and zones mean).

Only legal choices are taken: an illegal key or click changes nothing and says why. The game is
saved as a replay when it ends or the window closes, and measured like any other
(`marl_bgs_eval.tdm.replays.metrics`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pygame

from marl_bgs.core.arena import MIRROR_MOVE, MOVE_NAMES, MOVE_VECTORS
from marl_bgs.tdm.actions import COMBAT_NAMES
from marl_bgs.tdm.tables import REL_TO_ABS, RELATIVE_INDEX, spawn_left
from marl_bgs_clients.canvas import BACKGROUND, SELECTED, TEXT, font
from marl_bgs_clients.tdm.key import key_rect, key_strip
from marl_bgs_clients.tdm.render import Layout, draw, slot_name
from marl_bgs_clients.tdm.scene import Scene, oracle_scene, pov_scene
from marl_bgs_clients.tdm.session import Action, HumanGame
from marl_bgs_clients.window import open_window
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.tdm import replays
from marl_bgs_eval.tdm.legend import DAMAGE, result_text

PANEL_WIDTH = 400
COMPASS = {
    pygame.K_q: "northwest", pygame.K_w: "north", pygame.K_e: "northeast",
    pygame.K_a: "west", pygame.K_s: "stay", pygame.K_d: "east",
    pygame.K_z: "southwest", pygame.K_x: "south", pygame.K_c: "southeast",
}  # fmt: skip
SHIFT = (pygame.K_LSHIFT, pygame.K_RSHIFT)


@dataclass
class Draft:
    """The turn being built for one agent: a world-frame move and a (target slot, Ultimate)."""

    move: int = 0  # world frame
    target: int | None = None  # absolute slot; None with ultimate=True: untargeted Ultimate
    ultimate: bool = False


@dataclass
class BattleClient:
    """The window's state around a `HumanGame`; `handle(event)` applies input, `frame()` draws."""

    game: HumanGame
    out: Path = field(default_factory=lambda: Path("battle.replay.zip"))
    layout: Layout = field(default_factory=Layout)
    oracle: bool = False
    message: str = ""
    turn_index: int = 0  # which of game.humans is deciding
    chosen: dict[int, Action] = field(default_factory=dict)  # committed this tick (own frame)
    draft: Draft = field(default_factory=Draft)
    ult_mode: bool = False
    shift: bool = False  # a Shift key is held
    show_key: bool = False  # the key laid over the field's foot (L)
    saved: Path | None = None
    result: str = ""  # the final result, once the game is over

    @property
    def current(self) -> int:
        """The slot whose turn is being built."""
        return self.game.humans[self.turn_index]

    @property
    def size(self) -> tuple[int, int]:
        """The window's (width, height)."""
        w, h = self.layout.size
        return w + PANEL_WIDTH, h

    # -- the rules of a turn, read from the agent's mask ---------------------------------------

    def own_move(self, slot: int, world: int) -> int:
        """The agent's own-frame index of a world-frame move (and back: mirroring is its own
        inverse)."""
        swap = jnp.asarray(self.game.row["a_spawn"] == "right")
        left = bool(np.asarray(spawn_left(swap))[slot])
        return world if left else int(MIRROR_MOVE[world])

    def legal_moves(self) -> list[int]:
        """World-frame moves the current agent may make."""
        _, masks = self.game.turn(self.current)
        return [m for m in range(len(MOVE_NAMES)) if masks.move[self.own_move(self.current, m)]]

    def pair(self, target: int | None, ultimate: bool) -> tuple[int, int]:
        """The (relative target, Ultimate) pair of a target slot (None: no target)."""
        rel = 0 if target is None else int(RELATIVE_INDEX[self.current, target])
        return rel, int(ultimate)

    def legal_targets(self, ultimate: bool) -> list[int]:
        """Slots the current agent may hit with a Basic (or the Ultimate)."""
        _, masks = self.game.turn(self.current)
        return [j for j in range(10) if masks.pair[self.pair(j, ultimate)]]

    def action(self) -> Action:
        """The draft as the engine's own-frame action."""
        rel, ult = self.pair(self.draft.target, self.draft.ultimate)
        return self.own_move(self.current, self.draft.move), rel, ult

    # -- input ---------------------------------------------------------------------------------

    def handle(self, event: pygame.event.Event) -> bool:
        """Apply one input event; False when the client should close. A failure (a replay
        that cannot be written, ...) becomes the window's message."""
        if event.type == pygame.QUIT:
            return False
        if self.game.done:
            if event.type == pygame.KEYDOWN and event.key == pygame.K_l:
                self.show_key = not self.show_key
            return not (event.type == pygame.KEYDOWN and event.key in (pygame.K_q, pygame.K_ESCAPE))
        try:
            if event.type in (pygame.KEYDOWN, pygame.KEYUP) and event.key in SHIFT:
                self.shift = event.type == pygame.KEYDOWN
            elif event.type == pygame.KEYDOWN:
                return self._key(event)
            elif event.type == pygame.MOUSEBUTTONDOWN:
                self._click(event.pos, event.button)
        except Exception as err:  # shown, never raised out of the window's loop
            self.message = f"{type(err).__name__}: {err}"
        return True

    def _key(self, event: pygame.event.Event) -> bool:
        key = event.key
        if key == pygame.K_ESCAPE:
            return False
        if key in COMPASS:
            self.choose_move(MOVE_NAMES.index(COMPASS[key]))
        elif key == pygame.K_u:
            self.ult_mode = not self.ult_mode
            self.message = "Ultimate: click a ringed unit, or Enter to cast it untargeted"
            if not self.ult_mode:
                self.message = "Basic mode"
        elif key == pygame.K_n:
            self.draft.target, self.draft.ultimate, self.ult_mode = None, False, False
            self.message = "no combat"
        elif key in (pygame.K_RETURN, pygame.K_KP_ENTER):
            self.commit()
        elif key == pygame.K_BACKSPACE:
            self.undo()
        elif key == pygame.K_v:
            self.oracle = not self.oracle
        elif key == pygame.K_l:
            self.show_key = not self.show_key
        return True

    def _click(self, pos: tuple[int, int], button: int) -> None:
        x, y = self.layout.to_world(*pos)
        agent = self.scene().unit(self.current)
        if button == 3 and agent is not None:  # right: move toward the point
            d = np.asarray((x - agent.x, y - agent.y))
            if np.hypot(*d) < 0.2:
                self.choose_move(0)
            else:
                self.choose_move(1 + int(np.argmax(MOVE_VECTORS[1:] @ d)))
            return
        if button != 1:
            return
        hit = self.scene().unit_at(x, y)
        if hit is not None:
            self.choose_target(hit, self.ult_mode or self.shift)

    def choose_move(self, world: int) -> bool:
        """Set the draft's move (world frame) if legal; else say why."""
        if world not in self.legal_moves():
            self.message = f"{MOVE_NAMES[world]} is not legal now"
            return False
        self.draft.move, self.message = world, f"move {MOVE_NAMES[world]}"
        return True

    def choose_target(self, slot: int, ultimate: bool) -> bool:
        """Set the draft's target (Basic or Ultimate) if legal; else say why."""
        kind = "Ultimate" if ultimate else "Basic"
        if slot not in self.legal_targets(ultimate):
            self.message = f"no legal {kind} on {slot_name(slot)}"
            return False
        self.draft.target, self.draft.ultimate, self.ult_mode = slot, ultimate, False
        self.message = f"{kind} on {slot_name(slot)}"
        return True

    def commit(self) -> None:
        """Commit the current agent's turn; after the person's last agent, play the tick."""
        if self.ult_mode and self.draft.target is None:  # an untargeted Ultimate (Burst)
            _, masks = self.game.turn(self.current)
            if not masks.pair[0, 1]:
                self.message = "no untargeted Ultimate is legal now"
                return
            self.draft.ultimate, self.ult_mode = True, False
        action = self.action()
        problem = self.game.check(self.current, action)
        if problem:  # cannot happen through the choices above; kept as the game's own check
            self.message = problem
            return
        self.chosen[self.current] = action
        self.draft = Draft()
        if self.turn_index + 1 < len(self.game.humans):
            self.turn_index += 1
            self.message = f"now {slot_name(self.current)}"
        else:
            self.game.submit(dict(self.chosen))
            self.chosen, self.turn_index = {}, 0
            self.message = f"tick {self.game.tick} played"
            if self.game.done:
                self.result = result_text(self.game.replay().header)
                self.save()
                return
        if self.forced():  # a dead or stunned agent has nothing to choose: on to the next
            self.commit()

    def forced(self) -> bool:
        """Whether the current agent's only legal action is stay + no combat."""
        _, masks = self.game.turn(self.current)
        return int(masks.move.sum()) == 1 and int(masks.pair.sum()) == 1

    def undo(self) -> None:
        """Clear the current draft, or reopen the previous agent's turn of this tick."""
        if self.draft != Draft() or self.ult_mode:
            self.draft, self.ult_mode, self.message = Draft(), False, "choices cleared"
        elif self.turn_index > 0:
            self.turn_index -= 1
            move, rel, ult = self.chosen.pop(self.current)
            target = int(REL_TO_ABS[self.current, rel])
            self.draft = Draft(self.own_move(self.current, move), None if target < 0 else target,
                               bool(ult))  # fmt: skip
            self.message = f"back to {slot_name(self.current)}"

    def save(self) -> Path | None:
        """Save the game so far as a replay at `out` (nothing before the first tick)."""
        if self.game.tick == 0:
            return None
        try:
            self.saved = replays.save(self.game.replay(), self.out)
        except (EvalError, OSError) as err:
            self.message = f"not saved: {err}"
            return None
        self.message = f"saved {self.saved}"
        return self.saved

    # -- drawing -------------------------------------------------------------------------------

    def scene(self) -> Scene:
        """The current agent's POV, or the Oracle view."""
        if self.oracle or self.game.done:
            return oracle_scene(self.game.oracle())
        view, _ = self.game.turn(self.current)
        return pov_scene(view, self.current, self.game.row["a_spawn"] == "right")

    def frame(self) -> pygame.Surface:
        """The whole window's picture."""
        surface = pygame.Surface(self.size)
        surface.fill(BACKGROUND)
        field_part = surface.subsurface(pygame.Rect((0, 0), self.layout.size))
        scene = self.scene()
        if self.game.done:
            draw(field_part, scene, self.layout)
        else:
            targets = tuple(self.legal_targets(self.ult_mode or self.shift))
            draw(field_part, scene, self.layout, self.current, targets)
            self._moves(field_part, scene)
        if self.show_key:
            area = key_rect(field_part.get_rect())
            surface.blit(key_strip(area.width), area)
        self._panel(surface.subsurface(pygame.Rect(self.layout.size[0], 0, PANEL_WIDTH,
                                                   self.size[1])))  # fmt: skip
        return surface

    def _moves(self, surface: pygame.Surface, scene: Scene) -> None:
        """Legal moves as short arrows around the agent; the chosen one filled."""
        agent = scene.unit(self.current)
        if agent is None or not agent.alive:
            return
        centre = np.asarray(self.layout.to_px(agent.x, agent.y), float)
        for m in self.legal_moves():
            if m == 0:
                continue
            d = MOVE_VECTORS[m] * np.asarray((1, -1))
            tip = centre + d * self.layout.length(1.15)
            colour = SELECTED if m == self.draft.move else TEXT
            pygame.draw.circle(surface, colour, tip, 6 if m == self.draft.move else 3)

    def _panel(self, panel: pygame.Surface) -> None:
        panel.fill((255, 255, 255))
        g, lines = self.game, []
        if g.done:
            lines += ["The game is over:", self.result, "", "L: the key   Q: quit"]
        else:
            combat = self.action()[1:]
            _, masks = g.turn(self.current)
            lines += [
                f"tick {g.tick}: {slot_name(self.current)}'s turn "
                f"({self.turn_index + 1} of {len(g.humans)})",
                f"move: {MOVE_NAMES[self.draft.move]}",
                f"combat: {COMBAT_NAMES[combat[0]][combat[1]]}"
                + (f" on {slot_name(self.draft.target)}" if self.draft.target is not None else ""),
                f"Ultimate mode: {'on' if self.ult_mode else 'off'}   "
                f"cooldown {int(g.oracle().units.cooldown[self.current])}",
                f"legal: {int(masks.move.sum())} moves, {int(masks.pair.sum())} combat choices",
                f"view: {'Oracle' if self.oracle else 'agent POV'} (V switches)",
                "",
                *[
                    f"committed {slot_name(s)}: {MOVE_NAMES[self.own_move(s, a[0])]} + "
                    f"{COMBAT_NAMES[a[1]][a[2]]}"
                    for s, a in self.chosen.items()
                ],
                "",
                "Q W E / A S D / Z X C or right-click: move",
                "click a ringed unit: Basic (Shift or U: Ultimate)",
                "N: no combat   Enter: commit   Backspace: undo",
                "L: the key (what the pictures mean)",
            ]
        y = 10
        for line in lines:
            panel.blit(font(18).render(line, True, TEXT), (10, y))
            y += 18
        if self.message:
            panel.blit(
                font(18).render(self.message[:60], True, DAMAGE), (10, panel.get_height() - 26)
            )

    def run(self) -> None:  # pragma: no cover - needs a person at the window
        """Open the window and serve input until the window closes (the game is saved);
        `NoDisplayError` when no window can be shown."""
        screen = open_window(self.size, "MARL-BGs BattleClient")
        clock, running = pygame.time.Clock(), True
        while running:
            for event in pygame.event.get():
                running = running and self.handle(event)
            screen.blit(self.frame(), (0, 0))
            pygame.display.flip()
            clock.tick(30)
        try:
            self.save()
        finally:
            pygame.quit()
