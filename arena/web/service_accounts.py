"""The service's account routes: token login for the browser (a session cookie), the
upload form behind it, and the organiser's audit log."""

from __future__ import annotations

import html
from typing import Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from arena.service.accounts import SESSION_LIFETIME
from arena.web.service_pages import page, table
from arena.web.service_state import SESSION_COOKIE, ServiceState, client_address

__all__ = ["account_routes"]


def account_routes(state: ServiceState) -> APIRouter:
    """Routes: ``/service/login`` (form and post), ``/service/logout``, the audit log."""
    router = APIRouter()

    @router.get("/service/login", include_in_schema=False)
    def login_page(request: Request) -> HTMLResponse:
        owner = state.owner(request, required=False)
        if owner is None:
            body = (
                "<form method='post' action='/service/login'>"
                "<label>token <input name='token' type='password' autocomplete='off'></label>"
                " <button>log in</button></form>"
            )
            return page("Log in", body, "/api/service/status")
        body = (
            f"<p>logged in as {html.escape(owner.name)}"
            " (<form method='post' action='/service/logout' style='display:inline'>"
            f"<input type='hidden' name='csrf' value='{state.csrf(request)}'>"
            "<button>log out</button></form>)</p>"
            "<form method='post' action='/service/upload' enctype='multipart/form-data'>"
            f"<input type='hidden' name='csrf' value='{state.csrf(request)}'>"
            "<label>packed bot folder (.tar.gz) <input type='file' name='bundle'></label>"
            " <label><input type='checkbox' name='gate'> gate against my previous version"
            "</label> <button>submit</button></form>"
        )
        return page("Submit a bot", body, "/api/service/submissions")

    @router.post("/service/login", include_in_schema=False)
    def login(request: Request, token: str = Form(max_length=200)) -> RedirectResponse:
        owner = state.login(token, client_address(request))
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
        return answer

    @router.post("/service/logout", include_in_schema=False)
    def logout(request: Request, csrf: str = Form("")) -> RedirectResponse:
        state.check_csrf(request, csrf)
        with state.service() as service:
            service.end_session(request.cookies.get(SESSION_COOKIE, ""))
        answer = RedirectResponse("/service/login", status_code=303)
        answer.delete_cookie(SESSION_COOKIE)
        return answer

    def audit(request: Request) -> list[dict[str, Any]]:
        owner = state.owner(request)
        if owner is None or not owner.organiser:
            raise HTTPException(403, "the audit log is the organiser's")
        with state.service() as service:
            return service.audit_log()

    @router.get("/api/service/audit")
    def audit_api(request: Request) -> list[dict[str, Any]]:
        return audit(request)

    @router.get("/service/audit", include_in_schema=False)
    def audit_page(request: Request) -> HTMLResponse:
        rows = [
            (e["time"], e["actor"], e["address"], e["action"], e["detail"]) for e in audit(request)
        ]
        body = table(("time", "actor", "address", "what", "detail"), rows)
        return page("Audit log", body, "/api/service/audit")

    return router
