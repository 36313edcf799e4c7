"""Events: schedules, the event file, the SQLite store and leaderboards."""
