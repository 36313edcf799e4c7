"""Reference bots, each in its own folder with a ``bot.toml`` manifest (random, greedy, ...)."""
