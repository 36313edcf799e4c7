"""What the league service does for every request, before and after its route: security
headers on every answer, no form posted from another site, no request that takes for ever.

* ``Guard`` (ASGI middleware) adds ``Content-Security-Policy`` (this origin's scripts and
  styles only, no framing), ``X-Frame-Options``, ``X-Content-Type-Options: nosniff`` and
  ``Referrer-Policy`` to every answer; refuses (403) a ``POST`` a browser says comes from
  another site (``Origin`` not this host, or ``Sec-Fetch-Site: cross-site``), login included;
  and ends a request whose body stalls for ``idle_s`` or is not whole after ``body_s``
  (408): a trickling client holds nothing for long.
* ``guarded_protocol`` makes uvicorn's HTTP protocol close a connection that has not sent a
  request's headers within ``header_s`` (uvicorn itself waits for ever); ``guarded_config``
  is uvicorn's configuration with it, for every web app the arena serves (the viewer, a
  table, the league service).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import anyio
import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["SECURITY_HEADERS", "Guard", "RequestTimeout", "guarded_config", "guarded_protocol"]

SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline';"
        b" img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none';"
        b" form-action 'self'; object-src 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)


class RequestTimeout(Exception):
    """A request body that stalled or took too long (the route sees it as a cut upload)."""


class Guard:
    """The service's ASGI middleware (see the module's docstring)."""

    def __init__(self, app: ASGIApp, idle_s: float = 30.0, body_s: float = 300.0) -> None:
        self.app = app
        self.idle_s = idle_s
        self.body_s = body_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if scope["method"] == "POST" and _cross_site(headers):
            await _answer(send, 403, "forms are posted from this site's own pages only")
            return
        started = body_done = False
        deadline = time.monotonic() + self.body_s

        async def timed_receive() -> Message:
            nonlocal body_done
            if body_done:  # past the body: a stream waiting for the client to leave
                return await receive()
            left = min(self.idle_s, deadline - time.monotonic())
            try:
                if left <= 0:
                    raise TimeoutError
                message = await asyncio.wait_for(receive(), left)
            except TimeoutError:
                raise RequestTimeout from None
            body_done = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def secured_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        try:
            await self.app(scope, timed_receive, secured_send)
        except RequestTimeout:
            if not started:
                await _answer(send, 408, "the request's body did not arrive in time")
        except BaseExceptionGroup as group:
            # a client that left a stream (FastAPI's keepalive then writes to a closed
            # channel): nothing to answer, nothing to log
            if not started or group.split(anyio.BrokenResourceError)[1] is not None:
                raise


def _cross_site(headers: dict[str, str]) -> bool:
    """Whether a browser says the request comes from another site's page."""
    if headers.get("sec-fetch-site") == "cross-site":
        return True
    origin = headers.get("origin")
    if origin is None:
        return False  # not a browser's form or fetch (the CLI, curl)
    host = headers.get("host", "")
    return origin.split("://", 1)[-1] != host


async def _answer(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
    headers += [*SECURITY_HEADERS, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _GuardedH11(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers do not arrive
    within ``header_s`` (after it opens, or after its previous answer)."""

    header_s = 10.0

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def _arm(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        self._header_timer = self.loop.call_later(self.header_s, self._expired, self.cycle)

    def _expired(self, cycle: object) -> None:
        if self.cycle is cycle and not self.transport.is_closing():
            self.transport.close()  # no new request's headers since the timer was set

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(exc)


def guarded_protocol(header_s: float) -> type[H11Protocol]:
    """The protocol class for ``uvicorn.Config(http=...)`` with this header timeout."""
    return type("GuardedH11", (_GuardedH11,), {"header_s": header_s})


def guarded_config(app: ASGIApp, host: str, port: int, header_s: float = 10.0) -> uvicorn.Config:
    """uvicorn's configuration for ``app`` on ``host:port``: the guarded protocol, no proxy
    trusted (``X-Forwarded-For`` from nobody), warnings only."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=guarded_protocol(header_s),
        proxy_headers=False,
    )
