"""The heuristic reference bot: hand partitions, card counting, reasoned bets."""
