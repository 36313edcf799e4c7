"""The service's worker process: plays one round or checks one submission, then exits.

``arena league serve`` starts ``python -m arena.service.worker round --db DB`` when a round is
due (or unfinished) and ``... submission --db DB --id N --archive PATH`` for each upload. A
worker plays with the functions ``arena league round`` and ``arena league submit`` call
(``next_round``, ``play_round``, ``submit``), so a round of the service is a round of the
CLI. Its own process keeps a round's memory and a bot's crash out of the web process, and it
asks the kernel to kill it when the service dies (``PR_SET_PDEATHSIG``): after a kill -9 of
the service no orphan holds the league's round lock, and the restarted service resumes the
round where the database says it stopped, each play recorded once.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
from contextlib import closing
from pathlib import Path

from arena.rules import ArenaError
from arena.runtime.aio import tune_gc
from arena.service.accounts import ServiceDb
from arena.service.uploads import EXIT_PENDING, process
from arena.tournament.league.season import next_round, play_round, round_lock
from arena.tournament.league.store import LeagueStore

__all__ = ["EXIT_INTERRUPTED", "main", "play_one_round"]

EXIT_INTERRUPTED = EXIT_PENDING
"""A round stopped before its last play (a signal); the next worker continues it."""

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Asks the kernel to kill this process when the service that started it dies."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the service died before the request took effect
        os._exit(EXIT_INTERRUPTED)


def play_one_round(
    db: Path, *, allow_unsandboxed: bool = False, cluster: str | None = None
) -> bool:
    """Plays the unfinished round, or the next one; True when it finished.

    Raises:
        ArenaError: The round cannot be planned (too few bots, the season is over) or
            another process plays this league.
    """
    service = ServiceDb(db)
    try:
        with closing(LeagueStore(db, create=False)) as store, round_lock(store):
            round_ = next_round(store)
            label = f"season {round_.season} round {round_.number}"
            service.round_started(round_.id, label)
            result = play_round(store, round_, allow_unsandboxed=allow_unsandboxed, cluster=cluster)
            if result.finished:
                service.round_finished(round_.id, label)
            return result.finished
    finally:
        service.close()


def main(argv: list[str] | None = None) -> int:
    """The worker's command line (the service's, not a user's)."""
    parser = argparse.ArgumentParser(prog="python -m arena.service.worker")
    parser.add_argument("job", choices=("round", "submission"))
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--id", type=int, default=0)
    parser.add_argument("--archive", type=Path)
    parser.add_argument("--gate", action="store_true")
    parser.add_argument("--allow-unsandboxed", action="store_true")
    parser.add_argument("--parent", type=int, default=0)
    parser.add_argument("--cluster")
    args = parser.parse_args(argv)
    if args.parent:
        die_with_parent(args.parent)
    tune_gc()
    try:
        if args.job == "round":
            done = play_one_round(
                args.db, allow_unsandboxed=args.allow_unsandboxed, cluster=args.cluster
            )
            return 0 if done else EXIT_INTERRUPTED
        verdict = process(
            args.db,
            args.id,
            args.archive,
            gate=args.gate,
            allow_unsandboxed=args.allow_unsandboxed,
        )
        return verdict.exit
    except ArenaError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
