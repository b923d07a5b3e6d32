"""Team Deathmatch in the clients: its scenes, renderer, key and panels, its replay drawing
(`drawing.DRAWING`, found through `marl_bgs_clients.modes`), the BattleClient for human play
(`session`, `battle`) and the docs' pictures (`atlas`, `shots`)."""
