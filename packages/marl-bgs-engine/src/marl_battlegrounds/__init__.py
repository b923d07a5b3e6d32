"""Alias of `marl_bgs`, so that `import marl_battlegrounds as marl_bgs` works as in the paper."""

from marl_bgs import *  # noqa: F403
from marl_bgs import __all__, __version__  # noqa: F401
