"""Test settings for the learners: XLA's CPU backend at its lowest optimisation level.

Learner tests compile whole training programs (the game, two networks and their gradients) at
tiny sizes, so compilation, not running, is their cost; the lowest level roughly halves it. It
must be set before JAX starts its backend, hence here. Results within a test are unaffected: every
compared run uses the same compiled program.
"""

import os

os.environ.setdefault(
    "XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
)

import jax  # after XLA_FLAGS: JAX reads them when its backend starts
import pytest


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test module. Each compiled CPU program holds
    memory mappings; the whole suite in one process otherwise nears the kernel's limit of 65,530
    (`vm.max_map_count`), where XLA's compiler crashed with a segmentation fault. Programs stay
    shared within a module, where the fixtures reuse them."""
    yield
    jax.clear_caches()
