"""The greedy reference bot: lowest play that beats the table, simple calls."""
