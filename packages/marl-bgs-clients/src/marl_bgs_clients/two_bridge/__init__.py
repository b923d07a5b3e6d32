"""Two-Bridge in the clients: its pictures and its replay drawing (`drawing.DRAWING`, found
through `marl_bgs_clients.modes`)."""
