"""The service's submission routes: an upload over HTTP (the CLI's or the browser form's),
its verdict, and the submission log."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import ClientDisconnect

from arena.service.accounts import Owner
from arena.service.uploads import PACKING, UploadRefused, receive, upload_area
from arena.web.service_guard import RequestTimeout
from arena.web.service_pages import render
from arena.web.service_privacy import shown
from arena.web.service_state import ServiceState, State, client_address
from arena.web.viewer import PROBLEMS

__all__ = ["router"]

SubmissionId = Annotated[int, Path(ge=1, le=2**62)]
"""A submission's number: within SQLite's integers (a larger one is no submission)."""
FORM_SLACK = 64 * 1024
"""What the browser form may send beyond the upload cap (its other fields, part headers)."""
CUT = "the upload was cut off before its end; send it again"


router = APIRouter(responses=PROBLEMS)
"""The routes (``service.py`` includes them); each gets the service's state as a dependency."""


async def accept(
    state: ServiceState, owner: Owner, request: Request, chunks: AsyncIterator[bytes], gate: bool
) -> dict[str, Any]:
    """Checks the quotas, streams the upload into the upload area, starts its worker.

    An upload that does not arrive whole (cut off, timed out) ends its submission at
    once, its file removed: the owner may send again."""
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
                " the most a day allows (refused uploads do not count)",
            )
        gate = gate or state.require_gate
        submission_id = service.new_submission(owner.name, address, gate)
    declared = request.headers.get("content-length")
    archive = upload_area(state.db) / f"{submission_id}.tar.gz"
    try:
        if declared is not None and int(declared) > state.limits.max_upload_bytes + FORM_SLACK:
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
    except BaseException as e:  # cut off, timed out, the service stopping
        archive.unlink(missing_ok=True)
        with state.service() as service:
            service.finish_submission(submission_id, "interrupted", CUT)
        if isinstance(e, ClientDisconnect):
            raise HTTPException(400, CUT) from None  # answered to no one, logged nowhere
        if isinstance(e, RequestTimeout):
            raise HTTPException(408, "the upload did not arrive in time") from None
        raise
    args = ["submission", "--id", str(submission_id), "--archive", str(archive)]
    state.workers[submission_id] = state.spawn(*args, *(["--gate"] if gate else []))
    return {"id": submission_id, "status": "queued", "gate": gate}


@router.post("/api/service/submissions", status_code=202)
async def upload(state: State, request: Request, gate: bool = False) -> dict[str, Any]:
    """The body is the bot's folder as a gzipped tar (``arena league submit --server``);
    a token only (the browser's session posts the CSRF-checked form instead)."""
    owner = await asyncio.to_thread(state.owner, request, cookie=False)
    assert owner is not None
    return await accept(state, owner, request, request.stream(), gate)


@router.post("/service/upload", include_in_schema=False)
async def upload_form(state: State, request: Request) -> RedirectResponse:
    """The browser form: a session, its CSRF token, one file (the packed folder).

    The form is parsed as it arrives, its body counted: past the upload cap it is
    refused there, before more is spooled to disk."""
    owner = state.owner(request)
    assert owner is not None
    cap = state.limits.max_upload_bytes + FORM_SLACK
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise HTTPException(
            413, f"the upload is over the {state.limits.max_upload_bytes >> 10} KiB a"
            " submission may send",
        )  # fmt: skip
    kind = request.headers.get("content-type", "")
    if not kind.lower().startswith("multipart/form-data"):
        raise HTTPException(415, "send the upload form as the page does (multipart)")

    async def counted() -> AsyncGenerator[bytes, None]:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise HTTPException(
                    413, f"the upload is over the {state.limits.max_upload_bytes >> 10} KiB"
                    " a submission may send",
                )  # fmt: skip
            yield chunk

    parser = MultiPartParser(
        request.headers, counted(), max_files=1, max_fields=4, max_part_size=4096
    )
    try:
        form = await parser.parse()
    except MultiPartException as e:
        raise HTTPException(400, f"the upload form: {e.message}") from None
    except ClientDisconnect:
        raise HTTPException(400, CUT) from None
    try:
        state.check_csrf(request, str(form.get("csrf", "")))
        upload = form.get("bundle")
        if upload is None or isinstance(upload, str) or not upload.size:
            raise HTTPException(400, f"choose the bot's packed folder: {PACKING}")

        async def chunks() -> AsyncIterator[bytes]:
            while block := await upload.read(1 << 20):
                yield block

        answer = await accept(state, owner, request, chunks(), form.get("gate") == "on")
    finally:
        await form.close()
    return RedirectResponse(f"/service/submissions/{answer['id']}", status_code=303)


def submission_data(state: ServiceState, submission_id: int, request: Request) -> dict[str, Any]:
    owner = state.owner(request, required=False)
    with state.service() as service:
        found = service.submission(submission_id)
    if found is None:
        raise HTTPException(404, f"no submission {submission_id}")
    return shown(found.to_json(), owner, found.owner)


@router.get("/api/service/submissions/{submission_id}")
def verdict(state: State, submission_id: SubmissionId, request: Request) -> dict[str, Any]:
    """One submission; its reports to its owner alone."""
    return submission_data(state, submission_id, request)


@router.get("/service/submissions/{submission_id}", include_in_schema=False)
def verdict_page(state: State, submission_id: SubmissionId, request: Request) -> HTMLResponse:
    """One submission's page: it reloads itself until the verdict, then shows the
    check's report to the submission's owner."""
    s = submission_data(state, submission_id, request)
    done = s["status"] in ("accepted", "refused", "interrupted")
    checks = [
        (c["name"], "PASS" if c["passed"] else "FAIL", c["detail"])
        for c in (s["report"] or {}).get("check", [])
    ]
    answer = render(
        "submission.html",
        f"Submission #{submission_id}",
        f"/api/service/submissions/{submission_id}",
        s=s,
        refresh=not done,
        checks=checks,
    )
    if not done:
        answer.headers["Refresh"] = "2"
    return answer


def log(state: ServiceState) -> list[dict[str, Any]]:
    with state.service() as service:
        return [
            {**shown(s.to_json(), None, s.owner), "progress": s.progress if not s.done else ""}
            for s in service.submissions()
        ]


@router.get("/api/service/submissions")
def log_api(state: State) -> list[dict[str, Any]]:
    return log(state)


@router.get("/service/submissions", include_in_schema=False)
def log_page(state: State, request: Request) -> HTMLResponse:
    rows = [
        (
            {"href": f"/service/submissions/{s['id']}", "text": f"#{s['id']}"},
            s["time"],
            s["owner"],
            s["bot"] or "-",
            s["status"],
            s["reason"],
        )
        for s in log(state)
    ]
    header = ("", "time", "owner", "bot", "status", "reason")
    return render("rows.html", "Submissions", "/api/service/submissions", header=header, rows=rows)
