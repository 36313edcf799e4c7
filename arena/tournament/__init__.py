"""Tournaments: event files and their schedules, duplicate boards, the SQLite store, the
runner, leaderboards, the reference ladder and the CI gate."""
