"""The mode-agnostic core: the batched env, the Mode protocol and registry, start-state pools, the
team contract (team inputs, policies, the two-team step, the opponent-folded env), the arena's
geometry and movement physics, spaces and pytree helpers. Nothing here names a game mode."""
