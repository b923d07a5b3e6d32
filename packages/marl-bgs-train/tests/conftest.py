"""Test settings for the learners: compiled programs are dropped after each module.

(`nox -s tests` compiles them at XLA's lowest optimisation level, as every package's tests:
docs/testing.md.)
"""

import jax
import pytest


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test module. Each compiled CPU program holds
    memory mappings; the whole suite in one process otherwise nears the kernel's limit of 65,530
    (`vm.max_map_count`), where XLA's compiler crashed with a segmentation fault. Programs stay
    shared within a module, where the fixtures reuse them."""
    yield
    jax.clear_caches()
