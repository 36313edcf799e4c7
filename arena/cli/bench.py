"""``arena bench``: performance figures, printed; never part of the test suite."""

from __future__ import annotations

import math
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from arena.bench.engine import bench_engine

app = typer.Typer(help="Measure performance and print the figures.", no_args_is_help=True)


@app.command()
def engine(
    matches: Annotated[int, typer.Option(help="Random matches to 1000 to play.")] = 100,
    hands: Annotated[int, typer.Option(help="Random 14-card hands for play generation.")] = 20_000,
    seed: Annotated[int, typer.Option(help="Seed for deals and choices.")] = 1,
) -> None:
    """Random self-play and play-generation speed of the rules core on one core."""
    f = bench_engine(matches, hands, seed)
    print(f"random self-play : {f.matches} matches, {f.hands} hands in {f.seconds:.2f} s")
    print(f"  hands/s        : {f.hands_per_second:,.0f}")
    print(f"  decisions/hand : {f.decisions_per_hand:.1f}")
    print(f"  legal actions  : {f.legal_us:.2f} us per generation ({f.legal_calls:,} calls)")
    print(f"play generation  : {f.gen_hands:,} random 14-card hands in {f.gen_seconds:.2f} s")
    print(f"  hands/s        : {f.gen_hands_per_second:,.0f}")
    print(f"  plays/hand     : {f.gen_plays / f.gen_hands:.1f}")


@app.command("env")
def env_bench(
    hands: Annotated[int, typer.Option(min=1, help="Random hands per side and round.")] = 200,
    rounds: Annotated[int, typer.Option(min=1, help="Interleaved rounds (fastest kept).")] = 3,
    seed: Annotated[int, typer.Option(help="Seed of the first hand.")] = 1,
) -> None:
    """The learning environment's steps/s beside the rules core's own step (extra ``env``)."""
    try:
        from arena.bench.env import bench_env
    except ImportError as e:
        print(f"error: {e}: install the extra, pip install 'tichu-arena[env]'")
        raise typer.Exit(2) from None
    f = bench_env(hands, seed, rounds)
    print(f"rules core       : {f.core_answers:,} answers in {f.core_seconds:.2f} s")
    print(f"  answers/s      : {1e6 / f.core_us:,.0f} ({f.core_us:.1f} us: observe + apply)")
    print(f"environment      : {f.env_steps:,} steps for {f.env_answers:,} answers")
    print(f"  steps/s        : {f.env_steps / f.env_seconds:,.0f}")
    print(f"  answers/s      : {1e6 / f.env_us:,.0f} ({f.env_us:.1f} us: step + last)")
    print(f"encoding cost    : {f.encoding_share:.2f} x the core's step (goal: below 0.5)")
    print(
        f"  floor          : {f.floor_us:.1f} us per answer with no observation built (the mask"
        f" only): {f.floor_share:.2f} x the core's step"
    )
    print(
        f"  card blocks    : {f.blocks_us:.1f} us to unpack them into floats: with the floor,"
        f" {f.bound_share:.2f} x the core's step before any field of the view is read"
    )


@app.command("service")
def service_bench(
    rounds: Annotated[
        int, typer.Option(min=1, help="Rounds of the season under the service.")
    ] = 20,
    requests: Annotated[int, typer.Option(min=1, help="Requests to each page, in turn.")] = 200,
    gate: Annotated[
        bool, typer.Option("--gate/--no-gate", help="Also time a regressing upload's gate.")
    ] = True,
) -> None:
    """The league service from outside: a round beside the CLI's, uploads, memory, pages."""
    from arena.bench.service import bench_service
    from arena.service.client import RemoteError

    try:
        f = bench_service(rounds, requests, gate, on_line=lambda line: print(line, flush=True))
    except (RuntimeError, RemoteError) as e:
        print(f"error: {e}")
        raise typer.Exit(1) from None
    print(
        f"round 1          : {f.cli_round_s:.1f} s by arena league run, {f.service_round_s:.1f} s"
        f" scheduled by the service ({f.verdict_to_round_s:.1f} s from the upload's verdict)"
    )
    print(f"upload to verdict: {f.upload_s:.1f} s, a new bot (smoke check, no gate)")
    if f.gate_upload_s is not None:
        print(f"  with the gate  : {f.gate_upload_s:.1f} s, a regressing version ({f.gate_status})")
    rss = f.rss_mib
    print(
        f"service memory   : {rss[0]:.0f} MiB at start, {rss[1]:.0f} after round 1,"
        f" {rss[-1]:.0f} after round {len(rss) - 1}"
    )
    for page, rate in f.requests_per_s.items():
        print(f"  {page:<24}: {rate:,.0f} requests/s (one client, sequential)")


@app.command("playouts")
def playouts_bench(
    hands: Annotated[int, typer.Option(min=1, help="Heuristic self-play hands for positions.")] = 6,
    deals: Annotated[int, typer.Option(min=1, help="Playouts per position and kind.")] = 40,
    rounds: Annotated[int, typer.Option(min=1, help="Interleaved rounds.")] = 3,
    think: Annotated[float, typer.Option(min=0.01, help="Seconds per searched decision.")] = 0.2,
    seed: Annotated[int, typer.Option(help="Seed for positions and deals.")] = 1,
) -> None:
    """Playouts/s of the search bots on one core: today's, the same policy on the rules core
    and on the fast simulator, and both searches, interleaved."""
    from arena.bench.playouts import bench_playouts

    f = bench_playouts(hands, deals, rounds, think, seed)
    print(
        f"positions        : {f.positions} turns, {f.deals} playouts each per kind, {rounds} rounds"
    )
    rows = (
        ("search's playout", f.old, "SearchBot's policy on Match"),
        ("policy on Match ", f.core, "StrongBot's policy on Match"),
        ("policy on fast  ", f.fast, "StrongBot's policy on FastHand, weighted deals"),
        ("search (old)    ", f.search_old, "SearchBot iterations/s"),
        ("search (strong) ", f.search_strong, "StrongBot iterations/s"),
    )
    for label, xs, what in rows:
        each = ", ".join(f"{x:,.0f}" for x in xs)
        print(f"{label} : {f.median(xs):8,.0f}/s median ({each}) {what}")
    print(f"fast / same policy on Match: {f.median(f.fast) / f.median(f.core):.2f}x")


@app.command("grpc")
def grpc_bench(
    bot: Annotated[
        str, typer.Option(help="Bot for every seat: a manifest or a built-in name.")
    ] = "random",
    tables: Annotated[
        str, typer.Option(help="Comma-separated table counts to measure, e.g. 1,8.")
    ] = "1,8",
    hands: Annotated[int, typer.Option(min=1, help="Hands per table.")] = 40,
    bare: Annotated[
        int, typer.Option(min=0, help="Round trips of the bare ping-pong floor (0: skip).")
    ] = 5000,
    seed: Annotated[int, typer.Option(help="Seed of the first table.")] = 1,
    sandbox: Annotated[
        bool,
        typer.Option(
            "--sandbox/--no-sandbox",
            help="Bots in the host's full sandbox (as events run them) or in none.",
        ),
    ] = True,
    cgroup: Annotated[
        bool,
        typer.Option(
            "--cgroup/--no-cgroup",
            help="A cgroup per bot process where the host allows it (as events run them).",
        ),
    ] = True,
) -> None:
    """The referee over gRPC with bot processes on loopback: decisions/s, latency, CPU."""
    from arena.bench.grpc import LOGIC_MATCHES, bench_bare, bench_logic, bench_tables
    from arena.runtime.aio import loop_name, tune_gc
    from arena.runtime.aio import run as run_loop
    from arena.server.manifest import ManifestError, resolve_bot
    from arena.server.sandbox import SandboxError, require_sandbox, unsandboxed

    try:
        manifest = resolve_bot(bot)
        counts = [int(x) for x in tables.split(",") if x.strip()]
        box = require_sandbox() if sandbox else unsandboxed()
    except (ManifestError, SandboxError, ValueError) as e:
        print(f"error: {e}")
        raise typer.Exit(2) from None
    if not cgroup:
        box = replace(box, cgroups=None)
    tune_gc()  # as the long-running commands do
    experiments = os.environ.get("GRPC_EXPERIMENTS")
    io = "EventEngine (gRPC's default)" if not experiments else "GRPC_EXPERIMENTS=" + experiments
    print(f"gRPC I/O         : {io}, for the referee and the bots (arena.runtime.grpc_io)")
    print(f"event loop       : {loop_name()}, for the referee and SDK bots (arena.runtime.aio)")
    print(f"bot sandbox      : {box.summary()}")
    floor = None
    if bare:
        floor = run_loop(bench_bare(bare))
        print(
            f"bare ping-pong   : {floor.messages:,} round trips of 300 B, 1 client process,"
            f" {floor.per_second:,.0f}/s"
        )
        print(f"  p50 / p99      : {floor.p50_us:,.0f} / {floor.p99_us:,.0f} us")
        print(f"  server CPU     : {floor.cpu_us:,.0f} us per round trip")
    logic = run_loop(bench_logic(seed=seed))
    print(
        f"referee logic    : {logic.messages:,} decisions (+{logic.forced:,} forced), no transport,"
        f" {LOGIC_MATCHES} matches to 1000 ({logic.hands} hands)"
    )
    print(f"  referee CPU    : {logic.cpu_us:,.0f} us per decision beyond the transport")
    for n in counts:
        f = run_loop(bench_tables(manifest, n, hands, seed, sandbox=box))
        print(
            f"{f.label:<17}: {4 * n} '{manifest.name}' processes, {f.hands} hands,"
            f" {f.messages:,} decisions asked (+{f.forced:,} forced) in {f.seconds:.2f} s"
        )
        if n > 1:
            full_hands = f.full_rate * f.hands / f.messages if f.messages else 0.0
            print(
                f"  decisions/s    : {f.full_rate:,.0f} while all {n} tables played"
                f" ({f.per_second:,.0f} over the whole run)"
            )
            print(
                f"  hands/s        : {full_hands:,.1f} while all {n} tables played"
                f" ({f.hands_per_second:,.1f} over the whole run)"
            )
        else:
            print(f"  decisions/s    : {f.per_second:,.0f}")
            print(f"  hands/s        : {f.hands_per_second:,.1f}")
        print(f"  p50 / p99      : {f.p50_us:,.0f} / {f.p99_us:,.0f} us per decision")
        extra = f" ({f.cpu_us - floor.cpu_us:+,.0f} vs bare)" if floor is not None else ""
        print(f"  referee CPU    : {f.cpu_us:,.0f} us per decision{extra}")
        if f.bot_cpu_playing is None:
            print(f"  bots' CPU      : {f.bot_cpu_us:,.0f} us per decision (start-up included)")
        else:
            when = "while all played" if n > 1 else "while playing"
            print(
                f"  bots' CPU      : {1e6 * f.bot_cpu_playing:,.0f} us per decision {when}"
                f" ({f.bot_cpu_us:,.0f} with start-up)"
            )


@app.command("sandbox")
def sandbox_bench(
    starts: Annotated[int, typer.Option(min=1, help="Starts of each kind, interleaved.")] = 20,
) -> None:
    """What a bot process's start costs in the host's sandbox, against a plain start."""
    from arena.bench.sandbox import BOT_START, bench_startup

    f = bench_startup(starts)
    med = f.median
    print(f"command          : {sys.executable} -c {BOT_START!r}, {starts} starts of each kind")
    print(f"plain            : {med(f.plain_ms):6.1f} ms median")
    print(f"level none       : {med(f.none_ms):6.1f} ms median (prlimit, env -i)")
    print(
        f"host sandbox     : {med(f.boxed_ms):6.1f} ms median"
        f" ({f.sandbox.summary()}), {med(f.boxed_ms) - med(f.plain_ms):+.1f} ms vs plain"
    )
    if f.uncgrouped_ms:
        print(
            f"  without cgroup : {med(f.uncgrouped_ms):6.1f} ms median,"
            f" the cgroup {med(f.boxed_ms) - med(f.uncgrouped_ms):+.1f} ms"
        )


@app.command("event")
def event_bench(
    bot: Annotated[str, typer.Option(help="Bot in every seat: a manifest or built-in name.")] = (
        "random"
    ),
    boards: Annotated[int, typer.Option(min=3, help="Duplicate boards (two hands each).")] = 500,
    jobs: Annotated[int, typer.Option(min=1, help="Tables at once.")] = 6,
) -> None:
    """A 4-bot round robin on duplicate boards over gRPC: wall time, hands/s, CPU split."""
    from arena.bench.event import bench_event
    from arena.runtime.aio import tune_gc

    tune_gc()
    f = bench_event(bot, boards, jobs)
    cpu = f.referee_cpu + f.bots_cpu
    print(f"event            : {f.boards} boards, {f.hands} hands, {f.failures} failures")
    print(f"  wall           : {f.seconds:.1f} s ({f.hands_per_second:.1f} hands/s)")
    print(
        f"  CPU            : {cpu:.1f} s, referee {f.referee_cpu:.1f} s "
        f"({100 * f.referee_cpu / cpu:.0f}%), bots {f.bots_cpu:.1f} s "
        f"({100 * f.bots_cpu / cpu:.0f}%)"
    )


@app.command("cluster")
def cluster_bench(
    bot: Annotated[str, typer.Option(help="Bot in every seat: a manifest or built-in name.")] = (
        "random"
    ),
    plays: Annotated[
        int, typer.Option(min=28, help="One-hand plays in the event (5000: memory at length).")
    ] = 600,
    tables: Annotated[int, typer.Option(min=1, help="Tables at once, every way.")] = 2,
    scheduler: Annotated[
        str | None,
        typer.Option(help="Your scheduler (tcp://HOST:8786) instead of hand-started workers."),
    ] = None,
) -> None:
    """One event by the local pool, a local Dask cluster and hand-started Dask workers:
    hands/s per core and memory growth per 1,000 plays, side by side."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("error: the cluster benchmark needs Dask: pip install 'tichu-arena[cluster]'")
        raise typer.Exit(2) from None
    from arena.bench.cluster import bench_cluster
    from arena.runtime.aio import tune_gc

    tune_gc()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ways = bench_cluster(bot, plays, tables, scheduler)
    head = f"{'way':<34} {'plays':>6} {'hands':>6} {'wall s':>7} {'hands/s':>8} {'per core':>8}"
    print(f"{head} {'CPU ms/hand':>11} {'runner MiB/1k plays':>19} {'workers MiB/1k plays':>20}")
    for w in ways:
        workers = "-" if w.workers_mib_per_1k is None else f"{w.workers_mib_per_1k:+.1f}"
        cpu = f"{w.cpu_ms_per_hand:.0f}" if w.cpu_s else "-"
        print(
            f"{w.label:<34} {w.plays:>6} {w.hands:>6} {w.seconds:>7.1f}"
            f" {w.hands_per_second:>8.2f} {w.per_core:>8.2f} {cpu:>11}"
            f" {w.runner_mib_per_1k:>+19.1f} {workers:>20}"
        )
    base = ways[0]
    print(
        "per core against the local pool: "
        + ", ".join(f"{w.label} {100 * w.per_core / base.per_core:.0f} %" for w in ways[1:])
    )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


@app.command("web")
def web_bench(
    hands: Annotated[int, typer.Option(min=6, help="Hands of the generated event.")] = 1000,
    steps: Annotated[int, typer.Option(min=1, help="Replay steps to request.")] = 200,
) -> None:
    """The viewer over HTTP: a large event's game list and replay steps (needs the web extra)."""
    from arena.bench.web import bench_web

    f = bench_web(hands, steps)
    print(f"event            : {f.hands} hands of random play written in {f.build_s:.1f} s")
    print(f"event page       : {f.event_cold_s:.2f} s first, {f.event_warm_s:.2f} s after")
    print(f"game list        : {f.games_s * 1000:.0f} ms for all {f.hands} hands")
    print(f"first step       : {f.first_step_ms:.1f} ms (outline and re-play of the play)")
    print(f"replay step      : {f.step_ms_median:.1f} ms median, {f.step_ms_max:.1f} ms max")


@app.command("covert")
def covert_bench(
    bits: Annotated[int, typer.Option(min=1, help="Random bits per slot length and run.")] = 200,
    slots: Annotated[
        str, typer.Option(help="Comma-separated slot lengths in ms.")
    ] = "2,5,10,20,50",
    spinners: Annotated[str, typer.Option(help="Comma-separated sender process counts.")] = "1,2",
    placements: Annotated[
        str, typer.Option(help="Comma-separated: arena (no pinning), same-core, cross-core.")
    ] = "arena,same-core,cross-core",
    modes: Annotated[
        str, typer.Option(help="Comma-separated: cpu (spin), cache (walk a 64 MiB buffer).")
    ] = "cpu",
    seed: Annotated[int, typer.Option(help="Seed of the message bits.")] = 1,
    lead: Annotated[float, typer.Option(min=0.1, help="Seconds from launch to start.")] = 2.0,
    tables: Annotated[
        bool,
        typer.Option(
            "--tables",
            help="Colluding bots seated at real tables instead (partners, tables, two-bots),"
            " under the rules off, on and strict; --placements and --hands choose.",
        ),
    ] = False,
    hands: Annotated[int, typer.Option(min=1, help="Hands of each match (--tables).")] = 4,
) -> None:
    """The CPU and cache timing channel between two colluding sandboxed processes: bits/s."""
    from arena.bench.covert import DEAL_BITS, HAND_BITS, CovertError, bench_covert
    from arena.server.sandbox import SandboxError, require_sandbox

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if tables:
        wanted = placements if placements != "arena,same-core,cross-core" else ""
        _covert_tables([x.strip() for x in wanted.split(",") if x.strip()], hands, seed, progress)
        return
    try:
        slot_ms = [float(x) for x in slots.split(",") if x.strip()]
        counts = [int(x) for x in spinners.split(",") if x.strip()]
        if not slot_ms or min(slot_ms) <= 0 or not counts or min(counts) < 1:
            raise ValueError("slot lengths must be positive and spinners at least 1")
        box = require_sandbox()
        f = bench_covert(
            box,
            bits=bits,
            slots_ms=slot_ms,
            spinners=counts,
            placements=[x.strip() for x in placements.split(",") if x.strip()],
            modes=[x.strip() for x in modes.split(",") if x.strip()],
            seed=seed,
            lead_s=lead,
            progress=progress,
        )
    except (SandboxError, CovertError, ValueError) as e:
        print(f"error: {e}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        progress("covert: interrupted; both processes killed")
        raise typer.Exit(130) from None
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"bot sandbox      : {f.sandbox.summary()}, default limits")
    print(f"CPUs             : {','.join(map(str, f.cpus))}; load average {load}")
    print(f"message          : {bits} random bits per slot length after a 32-bit preamble")
    print("placement   mode  spin  pinned s/r   slot ms  errors     p   raw b/s  capacity b/s")
    for r in f.runs:
        pins = f"{r.sender_pinned[:3]}/{r.receiver_pinned[:3]}"
        for s in r.slots:
            print(
                f"{r.placement:<11} {r.mode:<5} {r.spinners:>4}  {pins:<11} {s.slot_ms:>8g}"
                f"  {s.errors:>6} {s.p:5.3f} {s.raw_bps:>9.1f} {s.capacity_bps:>13.1f}"
                f"   (progress 0/1: {s.zero_median:g}/{s.one_median:g})"
            )
    for r in f.runs:
        if "refused" in r.sender_pinned + r.receiver_pinned:
            print(f"pinning          : {r.placement}: {r.sender_pinned} / {r.receiver_pinned}")
    for line in f.skipped:
        print(f"skipped          : {line}")
    best = f.best
    if best is None:
        return
    run, slot = best
    print(
        f"best             : {slot.capacity_bps:.1f} bits/s capacity ({run.placement}, {run.mode},"
        f" {run.spinners} spinner(s), {slot.slot_ms:g} ms slots, p = {slot.p:.3f})"
    )
    for what, need in (
        ("a hand", f"log2 C(42,14) = {HAND_BITS:.2f} bits: another seat's 14 cards, given yours"),
        ("the deal", f"log2 42!/(14!^3) = {DEAL_BITS:.2f} bits: who holds each unseen card"),
    ):
        bits_needed = HAND_BITS if what == "a hand" else DEAL_BITS
        took = bits_needed / slot.capacity_bps if slot.capacity_bps > 0 else math.inf
        print(f"{what:<17}: {need}; {took:.2f} s at the best capacity")


def _covert_tables(
    placements: list[str], hands: int, seed: int, progress: Callable[[str], None]
) -> None:
    """``arena bench covert --tables``: the channel between colluding bots at real tables."""
    from arena.bench.collusion import PLACEMENTS, bench_channels
    from arena.server.sandbox import SandboxError, require_sandbox

    try:
        box = require_sandbox()
        with tempfile.TemporaryDirectory(prefix="tichu-collusion-") as tmp:
            runs = bench_channels(
                Path(tmp), placements or PLACEMENTS, hands=hands, seed=seed, progress=progress
            )
    except (SandboxError, ValueError) as e:
        print(f"error: {e}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        progress("covert: interrupted; the tables' bots stopped")
        raise typer.Exit(130) from None
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"bot sandbox      : {box.summary()}; load average {load}")
    print(f"matches          : {hands} hands each, 10 ms slots, colluders answer after 30 ms")
    print("placement  rules     bits      p  (95 % interval)   capacity b/s   partner's cards")
    for f in runs:
        lo, hi = f.p_interval
        c_lo, c_hi = f.capacity_bps
        rule = "off" if not f.frozen else "strict" if f.strict else "on"
        share = f"{f.share:.2f} of 14 (chance 0.33)" if f.shares else "-"
        print(
            f"{f.placement:<10} {rule:<7} {f.bits:>6} {f.p:6.3f}  ({lo:.3f}-{hi:.3f})"
            f"   {c_lo:5.1f}-{c_hi:<6.1f}   {share}"
        )
