"""The browser viewer (``arena web``): event and league pages, game lists, replays, live tables.

Needs the ``web`` extra (FastAPI and uvicorn). ``arena.web.app.create_app`` builds the app;
``timeline`` re-plays replays into per-perspective steps; ``live`` folds the runner's public
feed into a spectator's table; ``data`` reads event databases. See docs/web.md.
"""
