"""Python SDK for Tichu Arena bots: subclass ``Bot``, then ``sdk.run(bot)``."""

from sdk.bot import Bot

__all__ = ["Bot"]
