"""``arena league serve``: the league as one web service (see ``arena.service``).

``create_service_app`` is wiring: the viewer of ``arena web`` over the league database (its
games, replays and league pages) with the service's routes by concern (accounts,
submissions, league pages), and the scheduler as a task of the app's life: every
``poll_s`` it asks ``arena.service.scheduler.plan`` whether a round is due and starts a
worker process for it, one round at a time. At start-up, submissions whose worker died with
the last process are marked interrupted and their files removed, expired browser sessions
swept, and the stored CSRF key read (sessions and forms outlive a restart); an unfinished
round is resumed at once. A submission whose worker dies is ended as soon as the scheduler
sees it (within ``poll_s``). Every request passes ``service_guard.Guard`` (security headers,
no cross-site posts, body timeouts).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path

from fastapi import FastAPI

from arena.server.folder import remove_tree
from arena.service.accounts import ServiceDb
from arena.service.scheduler import plan
from arena.service.uploads import upload_area
from arena.tournament.league.store import LeagueStore
from arena.web.app import create_app
from arena.web.service_accounts import account_routes
from arena.web.service_guard import Guard
from arena.web.service_pages import league_routes
from arena.web.service_state import Limits, ServiceState
from arena.web.service_submissions import submission_routes

__all__ = ["Limits", "create_service_app"]

RETRY_S = 60.0
"""How long the scheduler waits after a round could not be planned (its worker says why in
``<db>.logs/service-workers.log``)."""


def create_service_app(
    db: Path,
    limits: Limits,
    *,
    allow_unsandboxed: bool = False,
    require_gate: bool = False,
    poll_s: float = 1.0,
    cluster: str | None = None,
) -> FastAPI:
    """The service over one league database.

    Raises:
        StoreError: The file is not a league database.
    """
    with closing(LeagueStore(db, create=False)) as store:
        # a league database, or a clear error now; its [gate] may require the gate
        require_gate = require_gate or store.league().gate.required
    with ServiceDb(db) as service:  # the service's tables, made once here
        service.interrupt_unfinished()
        service.sweep_sessions()
        csrf_key = service.csrf_key()
    state = ServiceState(
        db,
        limits,
        csrf_key,
        allow_unsandboxed=allow_unsandboxed,
        require_gate=require_gate,
        poll_s=poll_s,
        cluster=cluster,
    )
    state.failed.limit = limits.login_failures
    state.failed.window_s = limits.login_window_s
    _sweep_uploads(db)  # files of uploads whose worker died with the last process
    app = create_app([db], public=True)
    app.add_middleware(Guard, body_s=limits.body_timeout_s)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(_schedule(state))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await asyncio.to_thread(_stop_workers, state)

    app.router.lifespan_context = lifespan
    for router in (account_routes(state), submission_routes(state), league_routes(state)):
        app.include_router(router)
    app.state.service = state
    return app


async def _schedule(state: ServiceState) -> None:
    """Starts a round worker whenever a round is due and none runs; reaps finished workers."""
    while True:
        for submission_id, proc in list(state.workers.items()):
            if proc.poll() is not None:
                del state.workers[submission_id]
                await asyncio.to_thread(_ended, state, submission_id, proc.returncode)
        worker = state.round_worker
        if worker is not None and worker.poll() is not None:
            if worker.returncode == 2:  # cannot be planned now (a division short of bots)
                state.retry_at = time.monotonic() + RETRY_S
            state.round_worker = worker = None
        if worker is None and time.monotonic() >= state.retry_at:
            due = await asyncio.to_thread(_due, state)
            if due:
                cluster = ["--cluster", state.cluster] if state.cluster else []
                state.round_worker = state.spawn("round", *cluster)
        await asyncio.sleep(state.poll_s)


def _ended(state: ServiceState, submission_id: int, code: int) -> None:
    """A submission's worker exited: one that died before its verdict (killed, out of
    memory) ends its submission now, its files removed, so its owner may submit again."""
    with state.service() as service:
        found = service.submission(submission_id)
        if found is None or found.done:
            return
        area = upload_area(state.db)
        (area / f"{submission_id}.tar.gz").unlink(missing_ok=True)
        remove_tree(area / str(submission_id))
        why = f"signal {-code}" if code < 0 else f"exit {code}"
        service.finish_submission(
            submission_id,
            "interrupted",
            f"the check stopped before its verdict ({why}); send it again",
            progress="done",
        )


def _sweep_uploads(db: Path) -> None:
    """Empties the upload area at the start (its submissions were all interrupted)."""
    area = upload_area(db)
    if not area.is_dir():
        return
    for entry in area.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            remove_tree(entry)
        else:
            entry.unlink(missing_ok=True)


def _due(state: ServiceState) -> bool:
    with state.store() as store, state.service() as service:
        return plan(store, service).due


def _stop_workers(state: ServiceState) -> None:
    """Stops the round cleanly (its recorded plays stay; the rest play after a restart)."""
    procs = [*state.workers.values(), *([state.round_worker] if state.round_worker else [])]
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(60)
        except Exception:
            proc.kill()
            proc.wait()
