"""Leagues: registered bots with versions, rounds over time, ratings pooled across a season.

``spec`` reads the league file, ``store`` keeps the league's tables beside its events in one
SQLite file, ``season`` submits versions, plays rounds and computes season tables, ``render``
writes the league's leaderboards. docs/league.md walks an organiser through a season.
"""
