"""Python SDK for Tichu Arena bots: subclass ``Bot``, then ``sdk.run(bot)``.

``sdk.testing.play_local`` plays bots in-process, ``sdk.testing.check_bot_local`` checks that
a bot always answers legally, and ``sdk.sim`` has simulation helpers. ``python -m sdk
module:Class`` runs a bot class against a referee (docs/sdk.md).

A bot process is an entry point: importing ``sdk`` applies the process settings
(``arena.runtime.configure``) before the client imports gRPC.
"""

from arena.runtime import configure

configure()

from sdk.bot import Bot  # noqa: E402 (after the settings, before gRPC)
from sdk.client import run  # noqa: E402

__all__ = ["Bot", "run"]
