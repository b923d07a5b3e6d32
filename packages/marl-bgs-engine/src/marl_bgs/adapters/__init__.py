"""Any registered mode for other ecosystems; nothing heavy is imported here.

- `marl_bgs.adapters.jaxmarl.JaxMARLEnv`: a JaxMARL `MultiAgentEnv` (needs the `jaxmarl` extra);
  one game, vmapped outside as JaxMARL users do; what JaxMARL's baselines read (`world_state`,
  `state_size`, `num_allies`, one info value per agent).
- `marl_bgs.adapters.pettingzoo.PettingZooEnv`: a PettingZoo `ParallelEnv` on the host (needs the
  `pettingzoo` extra); numpy in and out.

Both build the validated native environment (`marl_bgs.make(mode, num_envs=1, ...)`) for their
settings and call the mode's own functions through `marl_bgs.adapters.game`; neither owns a rule.
"""
