"""The wire contract: generated protobuf and gRPC modules under short names.

``pb`` holds the messages and enums of ``proto/tichu/arena/v1/arena.proto`` (package
``tichu.arena.v1``); ``pb_grpc`` holds ``RefereeStub``, ``RefereeServicer`` and
``add_RefereeServicer_to_server``. Both are generated into ``arena/wire/_gen/`` by
``.venv/bin/python scripts/gen_proto.py``; docs/protocol.md is the contract they implement.

Between the contract and the rules core, one module per concern: ``values`` (plays, figures,
options, scores, hand results), ``events`` (one rules event is one ``Event``), ``request``
(``Observation`` <-> ``DecisionRequest``), ``answer`` (``Action``), all message-based and
readable; ``fastpath`` writes the referee's requests and events as bytes, checked against
them byte for byte.

>>> from arena.wire import pb
>>> pb.Hello(protocol_version=PROTOCOL_VERSION).protocol_version
'1.1.0'
"""

from __future__ import annotations

from arena.wire._gen.tichu.arena.v1 import arena_pb2 as pb
from arena.wire._gen.tichu.arena.v1 import arena_pb2_grpc as pb_grpc

PROTOCOL_VERSION = "1.1.0"
"""Semantic version of the contract in proto/ and docs/protocol.md, sent in Hello/Welcome."""

FIGURE_COUNT = 227
"""Size of the abstract figure space (docs/protocol.md, "Figures")."""

FIGURE_MASK_BYTES = (FIGURE_COUNT + 7) // 8
"""Length of LegalActions.figure_mask: 29 bytes, little-endian bit order."""

__all__ = ["FIGURE_COUNT", "FIGURE_MASK_BYTES", "PROTOCOL_VERSION", "pb", "pb_grpc"]
