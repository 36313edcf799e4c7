"""The referee server: gRPC seats, tables with seat tokens, open-table lobby, bot processes.

``ArenaServer`` (``app``) serves ``tichu.arena.v1.Referee``; ``TableManager``/``Table``
(``table``) run many tables at once; ``Lobby`` (``lobby``) seats bots that join with a key;
``GrpcSeat`` (``seat``) is the referee's ``Seat`` over a stream; ``bots`` starts bot
processes from manifests and reports their crashes (``play_table``: one table, four bot
processes, its records). ``Table.observe`` takes a ``SeatObserver`` that hears every join and
decision. The tournament runner and the tools use only the names below.
"""

from arena.referee import MatchPlan  # a table's matches are planned in the referee's terms
from arena.server.app import ArenaServer
from arena.server.bots import BotStartError, play_table
from arena.server.lobby import Lobby, Seating
from arena.server.seat import GrpcSeat, Refused, SeatObserver, Stream
from arena.server.table import Table, TableManager, TableSpec, TableState

__all__ = [
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
