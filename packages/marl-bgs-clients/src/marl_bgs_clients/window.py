"""Windows: whether this machine can show one, and opening it.

Without a window system SDL does not fail: it falls back to its `offscreen` video driver and
opens a window nobody can see, so a viewer's loop waits forever for a close that never comes
(the old "hang" of `marl-bgs-clients view` on a machine with no display). `display_problem`
says why no window can be shown before anything is opened; `open_window` refuses instead of
opening an invisible one. Only the standard library is imported until SDL must be asked.
"""

from __future__ import annotations

import os
import sys
from typing import Any

HEADLESS_DRIVERS = ("dummy", "offscreen")  # SDL video drivers that draw into no window
_X11_PLATFORMS = ("linux", "freebsd", "openbsd", "netbsd", "sunos")


class NoDisplayError(RuntimeError):
    """No window can be shown on this machine (the message says why)."""


def display_problem() -> str | None:
    """Why no window can be shown here, or None. Reads the environment first (no X11 or
    Wayland session on a Unix desktop, or `SDL_VIDEODRIVER` set to a headless driver); only
    when that allows a window is SDL's video started and its choice of driver checked."""
    driver = os.environ.get("SDL_VIDEODRIVER", "").strip().lower()
    if driver in HEADLESS_DRIVERS:
        return f"no display: SDL_VIDEODRIVER={driver} draws into no window"
    x11, wayland = os.environ.get("DISPLAY"), os.environ.get("WAYLAND_DISPLAY")
    if not driver and sys.platform.startswith(_X11_PLATFORMS):
        if not (x11 or wayland):
            return "no display: neither DISPLAY nor WAYLAND_DISPLAY is set"
        if not wayland:  # X11 only: SDL's Wayland probe would print its own error line
            os.environ["SDL_VIDEODRIVER"] = "x11"
        elif not (x11 or os.environ.get("XDG_RUNTIME_DIR")):
            return "no display: WAYLAND_DISPLAY is set but XDG_RUNTIME_DIR is not"
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    try:
        pygame.display.init()
    except pygame.error as err:
        return f"no display: SDL could not start its video ({err})"
    chosen = pygame.display.get_driver()
    if chosen in HEADLESS_DRIVERS:
        pygame.display.quit()
        return f"no display: SDL found no window system (it chose the {chosen} driver)"
    return None


def open_window(size: tuple[int, int], caption: str) -> Any:
    """Start pygame's video and fonts and open a window (NoDisplayError if none can be
    shown); returns the window's surface."""
    problem = display_problem()
    if problem:
        raise NoDisplayError(problem)
    import pygame

    pygame.display.init()
    pygame.font.init()
    screen = pygame.display.set_mode(size)
    pygame.display.set_caption(caption)
    return screen
