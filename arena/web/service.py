"""``arena league serve``: the league as one web service (see ``arena.service``).

``create_service_app`` is wiring: the viewer of ``arena web`` over the league database (its
games, replays and league pages) with the service's routes by concern (accounts,
submissions, league pages: module-level handlers, each given the service's state as a
FastAPI dependency), and the scheduler as a task of the app's life: every ``poll_s`` it
asks ``arena.service.scheduler.plan`` whether a round is due and starts a worker process for
it, one round at a time. At start-up, submissions the last process
stopped before their verdict are checked again (gate included; one whose upload was cut
short is marked interrupted), expired browser sessions swept, and the stored CSRF key read
(sessions and forms outlive a restart); an unfinished round is resumed at once.
A submission whose worker dies is ended as soon as the scheduler sees it (within
``poll_s``), its files removed. Every request passes ``service_guard.Guard`` (security
headers, no cross-site posts, body timeouts).
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
from arena.service.accounts import ServiceDb, Submission
from arena.service.scheduler import plan
from arena.service.uploads import EXIT_PENDING, resumable, upload_area
from arena.tournament.league.store import LeagueStore
from arena.web.app import create_app
from arena.web.service_accounts import router as account_router
from arena.web.service_pages import router as league_router
from arena.web.service_state import Limits, ServiceState
from arena.web.service_submissions import router as submission_router

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
        resumed = _resume_submissions(db, service)
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
    for partial in upload_area(db).glob("*.part"):  # uploads the last process was receiving
        partial.unlink(missing_ok=True)
    app = create_app([db], public=True, body_s=limits.body_timeout_s)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        for submission_id, args in resumed.items():
            state.workers[submission_id] = state.spawn(*args)
        task = asyncio.create_task(_schedule(state))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await asyncio.to_thread(_stop_workers, state)

    app.router.lifespan_context = lifespan
    for router in (account_router, submission_router, league_router):
        app.include_router(router)
    app.state.service = state
    return app


def _resume_submissions(db: Path, service: ServiceDb) -> dict[int, list[str]]:
    """The workers' arguments of the submissions the last service stopped before their
    verdict, to check again; one whose upload was not received whole is interrupted."""
    resumed: dict[int, list[str]] = {}
    for found in service.unfinished():
        archive = resumable(db, found.id)
        if archive is None:
            service.finish_submission(
                found.id,
                "interrupted",
                "the service stopped while it was received; submit it again",
                progress="done",
            )
            continue
        service.update_submission(
            found.id, status="queued", progress="checked again: the service restarted"
        )
        resumed[found.id] = _check_args(found, archive)
    return resumed


def _check_args(found: Submission, archive: Path) -> list[str]:
    """The worker's arguments that check a submission (again)."""
    args = ["submission", "--id", str(found.id), "--archive", str(archive)]
    return args + (["--gate"] if found.gate else [])


async def _schedule(state: ServiceState) -> None:
    """Starts a round worker whenever a round is due and none runs; reaps finished workers."""
    while True:
        for submission_id, proc in list(state.workers.items()):
            if proc.poll() is not None:
                del state.workers[submission_id]
                again = await asyncio.to_thread(_reaped, state, submission_id, proc.returncode)
                if again is not None:
                    state.workers[submission_id] = state.spawn(*again)
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


def _reaped(state: ServiceState, submission_id: int, code: int) -> list[str] | None:
    """A submission's worker ended. One stopped by a signal (``EXIT_PENDING``: a signal that
    was not the service's own stop, which cancels this loop first) is checked again: the
    worker's arguments are returned. One that died otherwise without a verdict is
    interrupted."""
    with state.service() as service:
        found = service.submission(submission_id)
        if found is None or found.done:
            return None
        archive = resumable(state.db, submission_id)
        if code == EXIT_PENDING and archive is not None:
            service.update_submission(submission_id, progress="checked again: its check stopped")
            return _check_args(found, archive)
        service.finish_submission(
            submission_id,
            "interrupted",
            f"its check stopped without a verdict (worker exit {code}); submit it again",
            progress="done",
        )
    if archive is not None:
        archive.unlink(missing_ok=True)
    remove_tree(upload_area(state.db) / str(submission_id))  # what it unpacked
    return None


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
