"""Python SDK for writing Tichu Arena bots."""
