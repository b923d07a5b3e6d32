"""Team Deathmatch's evaluation parts (found through `marl_bgs_eval.modes`)."""
