"""The random reference bot: a uniformly random legal answer to every decision."""
