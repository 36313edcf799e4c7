"""Tichu Arena: referee, tournament runner and tools for Tichu bots.

Importing ``arena`` sets gRPC's settings before gRPC is imported (``arena.grpc_io``).
"""

from arena.grpc_io import configure

configure()
