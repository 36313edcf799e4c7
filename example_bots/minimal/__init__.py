"""A random bot on the bare protocol, without the SDK (see bot.py)."""
