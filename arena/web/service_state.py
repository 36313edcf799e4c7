"""What the league service's routes share: the database, the owners' sessions, the limits,
the running workers, and how a request is authenticated."""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qsl

from fastapi import Depends, HTTPException, Request
from starlette.requests import ClientDisconnect

from arena.service.accounts import FailedLogins, Owner, ServiceDb, claimed_owner
from arena.tournament.league.store import LeagueStore

__all__ = [
    "LOGIN_COOKIE",
    "SESSION_COOKIE",
    "Limits",
    "ServiceState",
    "State",
    "service_state",
    "small_form",
]

SESSION_COOKIE = "arena_session"
LOGIN_COOKIE = "arena_login"
"""A random nonce the login page sets; the form carries its HMAC (``login_csrf``)."""


@dataclass(frozen=True)
class Limits:
    """The service's quotas: upload size, uploads per owner per day, failed logins per
    address, and how long a request may take to send its headers and its body."""

    max_upload_bytes: int
    daily_submissions: int = 20
    login_failures: int = 10
    login_window_s: float = 300.0
    header_timeout_s: float = 10.0
    body_timeout_s: float = 300.0


@dataclass
class ServiceState:
    """The state of one service process (one league database)."""

    db: Path
    limits: Limits
    csrf_key: bytes  # ServiceDb.csrf_key: stable across restarts
    allow_unsandboxed: bool = False
    require_gate: bool = False
    poll_s: float = 1.0
    cluster: str | None = None  # rounds on Dask (``arena.tournament.cluster``)
    failed: FailedLogins = field(default_factory=FailedLogins)
    workers: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    round_worker: subprocess.Popen[bytes] | None = None
    retry_at: float = 0.0
    cache: dict[str, Any] = field(default_factory=dict)
    tables: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)

    def service(self) -> ServiceDb:
        """A connection to the service's tables (one per request: SQLite connections stay
        in their thread)."""
        return ServiceDb(self.db, setup=False)

    @contextmanager
    def store(self) -> Iterator[LeagueStore]:
        """A connection to the league's tables, closed after the block."""
        store = LeagueStore(self.db, create=False)
        try:
            yield store
        finally:
            store.close()

    # ------------------------------------------------------------------ authentication

    def owner(
        self, request: Request, *, required: bool = True, cookie: bool = True
    ) -> Owner | None:
        """The owner a request speaks for: its bearer token, else (with ``cookie``) its
        session cookie.

        A wrong token counts as a failed login of the client's address; past the limit
        the address's attempts are refused (429) until the window passes.

        Raises:
            HTTPException: 401 without a valid token (when ``required``), 429 past the limit.
        """
        address = client_address(request)
        header = request.headers.get("authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else ""
        if not token:
            session = request.cookies.get(SESSION_COOKIE, "") if cookie else ""
            if session:
                with self.service() as service:
                    found = service.session_owner(session)
                if found is not None:
                    return found
            if required:
                raise HTTPException(401, "log in: send your token (Authorization: Bearer ...)")
            return None
        return self.login(token, address)

    def login(self, token: str, address: str) -> Owner:
        """Checks a token under the failed-login limits.

        Raises:
            HTTPException: 429 past the limit, 401 for a wrong or revoked token.
        """
        claimed = claimed_owner(token)
        wait = self.failed.blocked(address)
        if wait > 0:
            raise HTTPException(
                429,
                f"too many failed logins; try again in {int(wait) + 1} s",
                headers={"Retry-After": str(int(wait) + 1)},
            )
        with self.service() as service:
            found = service.authenticate(token)
            if found is None:
                self.failed.failed(address)
                service.audit(claimed or "?", address, "login refused", "wrong or revoked token")
                raise HTTPException(401, "wrong or revoked token")
        return found

    def csrf(self, request: Request) -> str:
        """The CSRF token of the request's session (an HMAC of the session id)."""
        session = request.cookies.get(SESSION_COOKIE, "")
        return hmac.new(self.csrf_key, session.encode(), hashlib.sha256).hexdigest()

    def check_csrf(self, request: Request, token: str) -> None:
        """Refuses a form post whose CSRF token is not its session's (403)."""
        if not request.cookies.get(SESSION_COOKIE) or not hmac.compare_digest(
            token, self.csrf(request)
        ):
            raise HTTPException(403, "the form's CSRF token does not match your session")

    def login_csrf(self, nonce: str) -> str:
        """The login form's CSRF token: an HMAC of the random ``nonce`` its page set as a
        cookie (a foreign page can neither read the cookie nor forge the token)."""
        return hmac.new(self.csrf_key, b"login:" + nonce.encode(), hashlib.sha256).hexdigest()

    def check_login_csrf(self, request: Request, token: str) -> None:
        """Refuses a login post without its page's CSRF token (403): a foreign page cannot
        log a browser into another account."""
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        if not nonce or len(nonce) > 100 or not hmac.compare_digest(token, self.login_csrf(nonce)):
            raise HTTPException(
                403, "the login form's CSRF token does not match: reload the login page"
            )

    # ------------------------------------------------------------------ workers

    def spawn(self, *args: str) -> subprocess.Popen[bytes]:
        """Starts a worker process (``arena.service.worker``) that dies with this one."""
        # -P: the working folder is not put on the path (a checkout there would shadow the
        # installed arena, as it does not for the ``arena`` command itself)
        argv = [sys.executable, "-P", "-m", "arena.service.worker", *args]
        argv += ["--db", str(self.db.resolve())]
        argv += ["--parent", str(os.getpid())]
        argv += ["--allow-unsandboxed"] if self.allow_unsandboxed else []
        logs = self.db.parent / f"{self.db.name}.logs"
        logs.mkdir(parents=True, exist_ok=True)
        with (logs / "service-workers.log").open("ab") as log:
            return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)


def service_state(request: Request) -> ServiceState:
    """The service's state (``app.state.service``): every route's dependency."""
    state: ServiceState = request.app.state.service
    return state


State = Annotated[ServiceState, Depends(service_state)]
"""A route's parameter for the service's state."""


def client_address(request: Request) -> str:
    """The client's address as the socket sees it (behind a proxy, run uvicorn with
    ``--forwarded-allow-ips``: docs/deploy.md)."""
    return request.client.host if request.client is not None else "?"


SMALL_FORM_BYTES = 4096
"""The most a login or logout form may send (a token, a CSRF token)."""


async def small_form(request: Request) -> dict[str, str]:
    """A small URL-encoded form (login, logout), read within ``SMALL_FORM_BYTES``.

    Raises:
        HTTPException: 415 for another encoding (a multipart file part costs the parser
            many times its size), 413 past the bound, 400 for a field given twice.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise HTTPException(415, "send this form URL-encoded, as the page does")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > SMALL_FORM_BYTES:
        raise HTTPException(413, f"the form is over the {SMALL_FORM_BYTES} bytes it may send")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > SMALL_FORM_BYTES:
                raise HTTPException(
                    413, f"the form is over the {SMALL_FORM_BYTES} bytes it may send"
                )
    except ClientDisconnect:
        raise HTTPException(400, "the form was cut off before its end") from None
    fields: dict[str, str] = {}
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=8)
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(400, "the form is not URL-encoded UTF-8") from None
    for key, value in pairs:
        if key in fields:
            raise HTTPException(400, f"the form's field {key[:20]!r} is given twice")
        fields[key] = value
    return fields
