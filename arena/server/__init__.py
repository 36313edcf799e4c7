"""The referee server: gRPC seats, tables with seat tokens, open-table lobby, bot processes.

``ArenaServer`` (``app``) serves ``tichu.arena.v1.Referee``; ``TableManager``/``Table``
(``table``) run many tables at once; ``Lobby`` (``lobby``) seats bots that join with a key;
``GrpcSeat`` (``seat``) is the referee's ``Seat`` over a stream; ``bots`` starts bot
processes from manifests and reports their crashes.
"""

from arena.server.app import ArenaServer
from arena.server.lobby import Lobby, Seating
from arena.server.seat import GrpcSeat, Refused, Stream
from arena.server.table import MatchPlan, Table, TableManager, TableSpec, TableState

__all__ = [
    "ArenaServer",
    "GrpcSeat",
    "Lobby",
    "MatchPlan",
    "Refused",
    "Seating",
    "Stream",
    "Table",
    "TableManager",
    "TableSpec",
    "TableState",
]
