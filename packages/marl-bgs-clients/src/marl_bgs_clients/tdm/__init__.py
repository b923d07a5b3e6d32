"""Team Deathmatch in the clients: its scenes, renderer, key and panels, and its replay drawing
(`drawing.DRAWING`, found through `marl_bgs_clients.modes`)."""
