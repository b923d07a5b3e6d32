"""The mode-agnostic core: the batched env, the Mode protocol and registry, start-state pools, the
team contract (team inputs, policies, the two-team step, the opponent-folded env), an open arena's
geometry and movement physics for any number of bodies (a mode may use them or not), spaces and
pytree helpers. Nothing here names a game mode or holds one mode's rules."""
