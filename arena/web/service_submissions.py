"""The service's submission routes: an upload over HTTP (the CLI's or the browser form's),
its verdict, and the submission log."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from arena.service.accounts import Owner
from arena.service.uploads import UploadRefused, receive, upload_area
from arena.web.service_pages import page, table
from arena.web.service_state import ServiceState, client_address

__all__ = ["submission_routes"]


def submission_routes(state: ServiceState) -> APIRouter:
    """Routes: ``POST /api/service/submissions``, the verdict, the log and its page."""
    router = APIRouter()

    async def accept(
        owner: Owner, request: Request, chunks: AsyncIterator[bytes], gate: bool
    ) -> dict[str, Any]:
        """Checks the quotas, streams the upload into the upload area, starts its worker."""
        address = client_address(request)
        with state.service() as service:
            if service.busy(owner.name):
                service.audit(owner.name, address, "submission refused", "one still running")
                raise HTTPException(
                    429, "a submission of yours is still being checked; wait for its verdict"
                )
            if service.submissions_since(owner.name) >= state.limits.daily_submissions:
                service.audit(owner.name, address, "submission refused", "daily quota")
                raise HTTPException(
                    429,
                    f"you sent {state.limits.daily_submissions} submissions in the last 24 hours,"
                    " the most a day allows",
                )
            gate = gate or state.require_gate
            submission_id = service.new_submission(owner.name, address, gate)
        declared = request.headers.get("content-length")
        archive = upload_area(state.db) / f"{submission_id}.tar.gz"
        try:
            if declared is not None and int(declared) > state.limits.max_upload_bytes:
                raise UploadRefused(
                    f"the upload is over the {state.limits.max_upload_bytes >> 10} KiB a"
                    " submission may send",
                    413,
                )
            await receive(chunks, archive, state.limits.max_upload_bytes)
        except UploadRefused as e:
            with state.service() as service:
                service.finish_submission(submission_id, "refused", str(e), report={"exit": 2})
            raise HTTPException(e.status, str(e)) from None
        except ValueError:
            with state.service() as service:
                service.finish_submission(submission_id, "refused", "bad Content-Length")
            raise HTTPException(400, "bad Content-Length") from None
        args = ["submission", "--id", str(submission_id), "--archive", str(archive)]
        state.workers[submission_id] = state.spawn(*args, *(["--gate"] if gate else []))
        return {"id": submission_id, "status": "queued", "gate": gate}

    @router.post("/api/service/submissions", status_code=202)
    async def upload(request: Request, gate: bool = False) -> dict[str, Any]:
        """The body is the bot's folder as a gzipped tar (``arena league submit --server``);
        a token only (the browser's session posts the CSRF-checked form instead)."""
        owner = state.owner(request, cookie=False)
        assert owner is not None
        return await accept(owner, request, request.stream(), gate)

    @router.post("/service/upload", include_in_schema=False)
    async def upload_form(request: Request) -> RedirectResponse:
        """The browser form: a session, its CSRF token, one file (the packed folder)."""
        owner = state.owner(request)
        assert owner is not None
        form = await request.form(max_files=1, max_fields=4)
        state.check_csrf(request, str(form.get("csrf", "")))
        upload = form.get("bundle")
        if upload is None or isinstance(upload, str):
            raise HTTPException(400, "choose the bot's packed folder (.tar.gz)")

        async def chunks() -> AsyncIterator[bytes]:
            while block := await upload.read(1 << 20):
                yield block

        answer = await accept(owner, request, chunks(), form.get("gate") == "on")
        return RedirectResponse(f"/service/submissions#s{answer['id']}", status_code=303)

    @router.get("/api/service/submissions/{submission_id}")
    def verdict(submission_id: int, request: Request) -> dict[str, Any]:
        """One submission; its reports to its owner alone."""
        owner = state.owner(request, required=False)
        with state.service() as service:
            found = service.submission(submission_id)
        if found is None:
            raise HTTPException(404, f"no submission {submission_id}")
        data = found.to_json()
        if owner is None or owner.name != found.owner:
            data["report"] = None
        return data

    def log() -> list[dict[str, Any]]:
        with state.service() as service:
            return [
                {**s.to_json(), "report": None, "progress": s.progress if not s.done else ""}
                for s in service.submissions()
            ]

    @router.get("/api/service/submissions")
    def log_api() -> list[dict[str, Any]]:
        return log()

    @router.get("/service/submissions", include_in_schema=False)
    def log_page(request: Request) -> HTMLResponse:
        rows = [
            (f"#{s['id']}", s["time"], s["owner"], s["bot"] or "-", s["status"], s["reason"])
            for s in log()
        ]
        body = table(("", "time", "owner", "bot", "status", "reason"), rows)
        return page("Submissions", body, "/api/service/submissions")

    return router
