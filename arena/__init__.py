"""Tichu Arena: referee, tournament runner and tools for Tichu bots.

Importing ``arena`` chooses gRPC's polling I/O before gRPC is imported (``arena.grpc_io``).
"""

from arena.grpc_io import prefer_polling_io

prefer_polling_io()
