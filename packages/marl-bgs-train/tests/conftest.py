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
