"""Tichu Arena: referee, tournament runner and tools for Tichu bots."""
