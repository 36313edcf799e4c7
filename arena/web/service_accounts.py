"""The service's account routes: token login for the browser (a session cookie), the
upload form behind it, and the organiser's audit log."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from arena.service.accounts import SESSION_LIFETIME
from arena.web.service_pages import render
from arena.web.service_privacy import Part, require
from arena.web.service_state import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    ServiceState,
    State,
    client_address,
    small_form,
)
from arena.web.viewer import PROBLEMS

__all__ = ["router"]


router = APIRouter(responses=PROBLEMS)
"""The routes (``service.py`` includes them); each gets the service's state as a dependency."""


def login_form(
    state: ServiceState, request: Request, message: str = "", status: int = 200
) -> HTMLResponse:
    """The login form, with a CSRF token tied to a fresh random cookie."""
    nonce = secrets.token_urlsafe(24)
    answer = render(
        "login.html",
        "Log in",
        "/api/service/status",
        status,
        message=message,
        csrf=state.login_csrf(nonce),
    )
    answer.set_cookie(
        LOGIN_COOKIE,
        nonce,
        max_age=3600,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return answer


@router.get("/service/login", include_in_schema=False)
def login_page(state: State, request: Request) -> HTMLResponse:
    owner = state.owner(request, required=False)
    if owner is None:
        return login_form(state, request)
    return render(
        "upload.html",
        "Submit a bot",
        "/api/service/submissions",
        owner=owner.name,
        csrf=state.csrf(request),
    )


@router.post("/service/login", include_in_schema=False)
async def login(state: State, request: Request) -> Response:
    """The browser's login: its page's CSRF token and a token; a refusal is the form
    again with the reason (never the JSON of the API)."""
    form = await small_form(request)
    state.check_login_csrf(request, form.get("csrf", ""))
    token = form.get("token", "")
    if len(token) > 200:
        return login_form(state, request, "that is not a token: paste the one you were given", 401)
    try:
        owner = await asyncio.to_thread(state.login, token, client_address(request))
    except HTTPException as e:
        return login_form(state, request, str(e.detail), e.status_code)
    answer = RedirectResponse("/service/login", status_code=303)
    with state.service() as service:
        session = service.new_session(owner.name)
    answer.set_cookie(
        SESSION_COOKIE,
        session,
        max_age=int(SESSION_LIFETIME.total_seconds()),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    answer.delete_cookie(LOGIN_COOKIE)
    return answer


@router.post("/service/logout", include_in_schema=False)
async def logout(state: State, request: Request) -> RedirectResponse:
    form = await small_form(request)
    state.check_csrf(request, form.get("csrf", ""))
    with state.service() as service:
        service.end_session(request.cookies.get(SESSION_COOKIE, ""))
    answer = RedirectResponse("/service/login", status_code=303)
    answer.delete_cookie(SESSION_COOKIE)
    return answer


def audit(state: ServiceState, request: Request) -> list[dict[str, Any]]:
    require(Part.AUDIT, state.owner(request))
    with state.service() as service:
        return service.audit_log()


@router.get("/api/service/audit")
def audit_api(state: State, request: Request) -> list[dict[str, Any]]:
    return audit(state, request)


@router.get("/service/audit", include_in_schema=False)
def audit_page(state: State, request: Request) -> HTMLResponse:
    rows = [
        (e["time"], e["actor"], e["address"], e["action"], e["detail"])
        for e in audit(state, request)
    ]
    header = ("time", "actor", "address", "what", "detail")
    return render("rows.html", "Audit log", "/api/service/audit", header=header, rows=rows)
