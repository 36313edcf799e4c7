"""Python SDK for Tichu Arena bots: subclass ``Bot``, then ``sdk.run(bot)``.

``sdk.testing.play_local`` plays bots in-process, ``sdk.testing.check_bot_local`` checks that
a bot always answers legally, and ``sdk.sim`` has simulation helpers. ``python -m sdk.run
module:Class`` runs a bot class against a referee (docs/sdk.md).
"""

from sdk.bot import Bot
from sdk.client import run

__all__ = ["Bot", "run"]
