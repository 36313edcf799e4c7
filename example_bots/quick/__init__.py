"""The quick reference bot: the heuristic's plans and counting, pruned to answer fast."""
