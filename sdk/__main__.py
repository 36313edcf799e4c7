"""Runs a bot against a referee: ``python -m sdk module:Class`` (or ``sdk.run(bot)`` in a script).

Settings come from keyword arguments, then command-line flags, then the environment:

| flag | environment | meaning |
|---|---|---|
| ``--server`` | ``TICHU_ARENA_SERVER`` | the referee, ``host:port`` (default ``127.0.0.1:50051``) |
| ``--token`` | ``TICHU_ARENA_TOKEN`` | the seat token of a pre-arranged table |
| ``--bot-key`` | ``TICHU_ARENA_BOT_KEY`` | a registered bot key, to join an open table |
| ``--name`` | ``TICHU_ARENA_NAME`` | display name (default: the bot's ``name``) |

The exit code is 0 when the referee closed the stream normally, 1 on a failure (refused
credentials, a referee that stayed unreachable), 2 on a usage error.
"""

from sdk.client import main

raise SystemExit(main())
