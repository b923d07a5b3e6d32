"""Team Deathmatch in the tournament: the browser viewer's replay JSON (`replay_json.PARTS`)."""
