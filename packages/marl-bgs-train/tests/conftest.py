"""Test settings for the learners: XLA's CPU backend at its lowest optimisation level.

Learner tests compile whole training programs (the game, two networks and their gradients) at
tiny sizes, so compilation, not running, is their cost; the lowest level roughly halves it. It
must be set before JAX starts its backend, hence here (pytest configures this file as it loads it,
before any test runs). Results within a test are unaffected: every compared run uses the same
compiled program. XLA's flags hold for the whole process, so only a session whose tests all lie in
this package gets them: other packages' tests compare separately compiled programs bit for bit
(at -O0 the engine's batched step and its one-game tick differ by an ulp).
"""

import os
from pathlib import Path

import jax
import pytest

LOWEST_OPTIMISATION = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"


def _only_learner_tests(config: pytest.Config) -> bool:
    """Whether every path this session was asked to collect lies in this package."""
    here, start = Path(__file__).parents[1], config.invocation_params.dir
    return all((start / arg.split("::")[0]).resolve().is_relative_to(here) for arg in config.args)


def pytest_configure(config: pytest.Config) -> None:
    if _only_learner_tests(config):
        # Flags already set (the nox session's, yours) come after these, so they win.
        os.environ["XLA_FLAGS"] = f"{LOWEST_OPTIMISATION} {os.environ.get('XLA_FLAGS', '')}".strip()


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test module. Each compiled CPU program holds
    memory mappings; the whole suite in one process otherwise nears the kernel's limit of 65,530
    (`vm.max_map_count`), where XLA's compiler crashed with a segmentation fault. Programs stay
    shared within a module, where the fixtures reuse them."""
    yield
    jax.clear_caches()
