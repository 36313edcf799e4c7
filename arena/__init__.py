"""Tichu Arena: referee, tournament runner and tools for Tichu bots.

Importing ``arena`` (or ``arena.rules``) has no side effects. The entry points (the ``arena``
command, the SDK, the test suite) apply gRPC's settings with ``arena.runtime.configure()``
before gRPC is imported.
"""
