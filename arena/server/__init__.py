"""The referee server: gRPC seats, tables with seat tokens, open-table lobby, bot processes.

``ArenaServer`` (``app``) serves ``tichu.arena.v1.Referee``; ``TableManager``/``Table``
(``table``) run many tables at once; ``Lobby`` (``lobby``) seats bots that join with a key;
``GrpcSeat`` (``seat``) is the referee's ``Seat`` over a stream; ``bots`` starts bot
processes from manifests and reports their crashes (``play_table``: one table, four bot
processes, its records). ``Table.observe`` takes a ``SeatObserver`` that hears every join and
decision. The tournament runner and the tools use only the names below.
"""

# gRPC's settings before this package loads gRPC, in every process that plays: one started by
# no entry point of the arena (a Dask worker started by hand unpickles a task, which imports
# this) would otherwise fork its bots with gRPC's fork handlers on, while its threads run
# (bot processes died with SIGSEGV before joining: issue 49).
from arena.runtime import configure

configure()

from arena.referee import MatchPlan  # noqa: E402  (planned in the referee's terms)
from arena.server.app import ArenaServer  # noqa: E402
from arena.server.bots import BotStartError, play_table  # noqa: E402
from arena.server.lobby import Lobby, Seating  # noqa: E402
from arena.server.seat import GrpcSeat, Refused, SeatObserver, Stream  # noqa: E402
from arena.server.table import (  # noqa: E402
    ARENA_FAULT,
    Table,
    TableManager,
    TableSpec,
    TableState,
)

__all__ = [
    "ARENA_FAULT",
    "ArenaServer",
    "BotStartError",
    "GrpcSeat",
    "Lobby",
    "MatchPlan",
    "Refused",
    "SeatObserver",
    "Seating",
    "Stream",
    "Table",
    "TableManager",
    "TableSpec",
    "TableState",
    "play_table",
]
