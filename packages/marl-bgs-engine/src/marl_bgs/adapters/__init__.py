"""Views of one Team Deathmatch game for other ecosystems; nothing heavy is imported here.

- `marl_bgs.adapters.jaxmarl.TeamDeathmatchJaxMARL`: a JaxMARL `MultiAgentEnv` (needs the
  `jaxmarl` extra); one game, vmapped outside as JaxMARL users do.
- `marl_bgs.adapters.pettingzoo.TeamDeathmatchParallelEnv`: a PettingZoo `ParallelEnv` on the host
  (needs the `pettingzoo` extra); numpy in and out.

Both build the validated native environment (`marl_bgs.make("tdm", num_envs=1, ...)`) for their
settings and call the engine's own functions (`draw_start`, `transition`, `flat_views`,
`action_masks`) through `marl_bgs.adapters.game`; neither owns a rule.
"""
