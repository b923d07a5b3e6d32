"""LLM agents for MARL-BattleGrounds over OpenAI-compatible Chat Completions.

This package is a skeleton: its features land with their own issues.
"""

from importlib.metadata import version as _version

__version__ = _version("marl-bgs-llm")
__all__ = ["__version__"]
