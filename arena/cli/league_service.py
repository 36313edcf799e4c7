"""``arena league serve``, ``owner``, ``backup`` and ``submit --server``: the league as a
service (``arena.service``, ``arena.web.service``); thin commands over those packages."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.common import (
    AllowUnsandboxedOpt,
    ClusterOption,
    interrupted_exits,
    make_console,
    old_spelling,
)
from arena.rules import ArenaError
from arena.service.accounts import ServiceDb
from arena.service.backup import backup
from arena.service.client import RemoteError, submit_remote
from arena.service.uploads import MAX_UPLOAD_BYTES
from arena.tournament.league.store import LeagueStore

__all__ = ["backup_command", "owner_app", "read_token", "serve_command", "submit_to_server"]

console = make_console()
errors = make_console(stderr=True)
owner_app = typer.Typer(help="Bot authors' accounts on the league service.", no_args_is_help=True)

DbOption = Annotated[Path, typer.Option(dir_okay=False, help="The league database (SQLite).")]
DEFAULT_DB = Path("league.sqlite")


def _fail(message: str, code: int = 2) -> None:
    errors.print(f"[red]error[/red]: {escape(message)}", soft_wrap=True, highlight=False)
    raise typer.Exit(code)


def _service(db: Path) -> ServiceDb:
    if not db.is_file():
        _fail(f"{db}: no league database here; create one with arena league init")
    try:
        LeagueStore(db, create=False).close()  # a league's database, not any file
    except ArenaError as e:
        _fail(str(e))
    try:
        return ServiceDb(db)
    except Exception as e:  # sqlite3.Error: not a database
        _fail(f"{db}: not a league database ({e})")
        raise


@owner_app.command("add")
def owner_add(
    name: Annotated[str, typer.Argument(help="The owner (an author, or the organiser).")],
    db: DbOption = DEFAULT_DB,
    organiser: Annotated[
        bool, typer.Option(help="An organiser's account: may read the audit log.")
    ] = False,
) -> None:
    """Create an account; its token is printed alone on stdout, once (only its hash is kept)."""
    with _service(db) as service:
        try:
            token = service.add_owner(name, organiser=organiser)
        except ArenaError as e:
            _fail(str(e))
    print(token)


@owner_app.command("list")
def owner_list(db: DbOption = DEFAULT_DB) -> None:
    """List the accounts: name, role, created, revoked."""
    with _service(db) as service:
        for owner in service.owners():
            revoked = f", revoked {owner.revoked}" if owner.revoked else ""
            console.print(
                f"{owner.name} ({owner.role}), created {owner.created}{revoked}", highlight=False
            )


@owner_app.command("revoke")
def owner_revoke(
    name: Annotated[str, typer.Argument(help="The owner.")], db: DbOption = DEFAULT_DB
) -> None:
    """Revoke an account's token: it logs in no more (its bots stay in the league)."""
    with _service(db) as service:
        try:
            done = service.revoke(name)
        except ArenaError as e:
            _fail(str(e))
    console.print(f"{name}: " + ("revoked" if done else "revoked already"), highlight=False)


def backup_command(
    out: Annotated[Path, typer.Argument(dir_okay=False, help="The backup file (new).")],
    db: DbOption = DEFAULT_DB,
) -> None:
    """Copy the league database with SQLite's online backup (safe while a round plays)."""
    try:
        pages = backup(db, out)
    except ArenaError as e:
        _fail(str(e))
    console.print(
        f"{db} -> {out}: {pages} pages; copy {db.name}.bots/ beside it (docs/deploy.md)",
        highlight=False,
    )


def serve_command(
    db: DbOption = DEFAULT_DB,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8000,
    daily_submissions: Annotated[
        int, typer.Option(min=1, help="Uploads per owner in any 24 hours.")
    ] = 20,
    max_upload_kb: Annotated[
        int, typer.Option(min=1, help="The largest upload (KiB, packed).")
    ] = MAX_UPLOAD_BYTES >> 10,
    require_gate: Annotated[
        bool,
        typer.Option(
            help="Gate every new version against its previous one (as the league file's"
            " [gate] required = true does)."
        ),
    ] = False,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option(
            help="The address of a reverse proxy whose X-Forwarded-For and X-Forwarded-Proto"
            " are believed (repeat for several); by default none is."
        ),
    ] = None,
    header_timeout_s: Annotated[
        float, typer.Option(min=1, help="Seconds to send a request's headers.")
    ] = 10.0,
    body_timeout_s: Annotated[
        float, typer.Option(min=1, help="Seconds a request may take to send its body (an upload).")
    ] = 300.0,
    cluster: ClusterOption = None,
    allow_unsandboxed: AllowUnsandboxedOpt = False,
    header_timeout: Annotated[float | None, old_spelling("--header-timeout", min=1)] = None,
    body_timeout: Annotated[float | None, old_spelling("--body-timeout", min=1)] = None,
) -> None:
    """Serve the league: accounts, uploads, rounds on the league file's schedule, pages."""
    try:
        import uvicorn

        from arena.web.service import Limits, create_service_app
        from arena.web.service_guard import guarded_protocol
    except ImportError as e:
        _fail(
            f"the service needs the web extra ({e.name} is missing): pip install 'tichu-arena[web]'"
        )
        raise
    if not db.is_file():
        _fail(f"{db}: no league database here; create one with arena league init")
    if header_timeout is not None:
        header_timeout_s = header_timeout
    if body_timeout is not None:
        body_timeout_s = body_timeout
    limits = Limits(
        max_upload_bytes=max_upload_kb << 10,
        daily_submissions=daily_submissions,
        header_timeout_s=header_timeout_s,
        body_timeout_s=body_timeout_s,
    )
    try:
        app = create_service_app(
            db,
            limits,
            allow_unsandboxed=allow_unsandboxed,
            require_gate=require_gate,
            cluster=cluster,
        )
    except ArenaError as e:
        _fail(str(e))
    proxies = trusted_proxy or []
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=guarded_protocol(header_timeout_s),
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or None,
    )
    server = uvicorn.Server(config)
    with interrupted_exits(stop=lambda: setattr(server, "should_exit", True)):
        errors.print(
            f"league service over {db}; open http://{host}:{port}/service (Ctrl-C stops)",
            highlight=False,
        )
        server.run()


def read_token(path: Path) -> str:
    """The token in a file (its first line; the file should be readable by its owner only)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        _fail(f"{path}: cannot read the token file ({e.strerror})")
        raise
    return text.strip().splitlines()[0] if text.strip() else ""


def submit_to_server(folder: Path, server: str, token: str | None, gate: bool) -> None:
    """``arena league submit FOLDER --server URL``: upload, progress lines, the verdict.

    Exits 0 when accepted, 1 when refused (the smoke check, the gate), 2 for bad input (a
    folder, token or upload the server does not take).
    """
    if not token:
        _fail("no token: set ARENA_TOKEN or pass --token-file (arena league owner add prints one)")
    assert token is not None

    def line(text: str) -> None:
        console.print(f"  {escape(text)}", highlight=False, soft_wrap=True)

    received: list[int] = []
    try:
        verdict = submit_remote(
            folder, server, token, gate=gate, on_line=line, on_received=received.append
        )
    except RemoteError as e:
        _fail(str(e), e.code)
        raise
    except KeyboardInterrupt:
        base = server.rstrip("/")
        if received:
            said = (
                f"stopped waiting: the server carries on with submission {received[0]};"
                f" its verdict: {base}/service/submissions/{received[0]}"
            )
        else:
            said = f"stopped during the upload: whether it arrived: {base}/service/submissions"
        errors.print(escape(said), highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None
    report = verdict.get("report") or {}
    for check in report.get("check", []):
        mark = "PASS" if check["passed"] else "FAIL"
        line(f"{mark} {check['name']}: {check['detail']}")
    if verdict["status"] == "accepted":
        console.print(
            f"accepted: {escape(verdict['reason'])} (hash {(verdict['hash'] or '')[:12]})",
            highlight=False,
        )
        return
    _fail(f"refused: {verdict['reason']}", int(report.get("exit", 2)) or 2)
