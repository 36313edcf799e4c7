"""The gRPC client that plays one ``Bot`` on one seat (docs/protocol.md, sections 2 and 8-11).

``BotClient(bot, config).run()`` opens one ``Referee.Play`` stream, sends ``Hello`` and then
answers every ``DecisionRequest``: it decodes the view into the same ``Observation`` the bot
sees in-process, asks ``bot.call_tichu`` (when a call is allowed) and ``bot.act``, and
answers with the legal index, the cards echo, the Tichu flag and the exchange cards. A
``Welcome`` starts a match (``on_match_start``), ``match_end`` ends it (``on_match_end``);
the referee may start another match on the same stream. When the stream ends with status
OK the client returns 0.

Policies (documented in docs/sdk.md):

* **The clock.** The bot runs in the client's thread (the fastest way: no thread hand-off).
  When the decision time plus the bank is nearly spent (``safety_ms`` before), a SIGALRM
  timer interrupts it (an exception raised inside ``act``) and the client sends the default
  answer itself, which costs no strike. With ``threaded=True`` the bot runs in a worker
  thread instead and is never interrupted: its late result is dropped, and later decisions
  wait for it (and get the default if it is still busy). Measured on a trivial bot, the
  hand-off costs 50-90 µs per decision.
* **A failing bot.** An exception in the bot, or an answer that is not legal, is logged
  with its traceback to stderr and replaced by the default answer (pass when legal, else
  the first entry; the three lowest cards for the exchange; no Tichu call). The process
  keeps playing: one bug should not forfeit a match. ``strict=True`` stops instead.
  Every answer the client gives on the bot's behalf (late, exception, bad answer) says so
  in ``Action.fault``, so the referee records and counts the bot's failures.
* **Rejected answers.** If the referee rejects an answer (an in-band ``Error``), the client
  sends the default answer once (a ``BAD_ANSWER`` fault); if that is rejected too it leaves
  the request to the referee's own default.
* **Seeds.** Each ``Welcome`` carries the seat's seed for the match (else
  ``TICHU_ARENA_SEED``): the client re-seeds ``bot.rng`` with it before ``on_match_start``.
* **Dropped streams.** On ``UNAVAILABLE`` the client reconnects with backoff, presenting
  its seat token with ``resume = true``, for the failure policy's reconnect grace (or
  ``reconnect_s``). Before the first ``Welcome`` it retries for ``connect_timeout_s``
  (the referee may not be listening yet). Other non-OK statuses end the client with 1,
  except ``ABORTED`` (another stream took the seat): 0.

``run(bot)`` and ``main(argv)`` (behind ``python -m sdk module:Class``) build the
``ClientConfig`` from keyword arguments, flags and the environment (see ``sdk/run.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import importlib
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from arena.rules import Observation, Options, default_action
from arena.runtime.aio import run as run_loop
from arena.runtime.aio import tune_gc
from arena.wire import PROTOCOL_VERSION, pb
from arena.wire.answer import AnswerError, decode_answer, encode_answer
from arena.wire.events import HistoryCache
from arena.wire.request import decode_request
from arena.wire.values import decode_options, decode_scores
from sdk.bot import Bot

__all__ = ["CHANNEL_OPTIONS", "BotClient", "BotError", "ClientConfig", "load_bot", "main", "run"]

log = logging.getLogger("sdk")

PLAY_METHOD = "/tichu.arena.v1.Referee/Play"

CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    # docs/protocol.md section 14: notice half-open connections during long idle spells.
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
]

EXIT_OK = 0
EXIT_FAILED = 1

_RETRY = grpc.StatusCode.UNAVAILABLE
_RETRY_SEATED = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
# Rejections of an answer to a still open request: worth one more (default) answer.
_ANSWER_AGAIN = frozenset(
    {
        pb.ERROR_CODE_MALFORMED,
        pb.ERROR_CODE_STATE_MISMATCH,
        pb.ERROR_CODE_CARDS_MISMATCH,
        pb.ERROR_CODE_ILLEGAL_EXCHANGE,
        pb.ERROR_CODE_TICHU_NOT_ALLOWED,
    }
)
_NAME_LIMIT = 64


class _OutOfTime(BaseException):
    """Raised inside the bot by the clock guard (not an ``Exception``: bots rarely catch it)."""


class _AlarmGuard:
    """The process's SIGALRM handler, shared by the clients of one thread (refcounted)."""

    users = 0
    previous: Any = None
    thinking = False

    @classmethod
    def acquire(cls) -> bool:
        if not hasattr(signal, "setitimer"):
            return False
        if cls.users == 0:
            try:
                cls.previous = signal.signal(signal.SIGALRM, cls._on_alarm)
            except ValueError:  # not the main thread
                return False
        cls.users += 1
        return True

    @classmethod
    def release(cls) -> None:
        cls.users -= 1
        if cls.users == 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, cls.previous)

    @staticmethod
    def _on_alarm(signum: int, frame: object) -> None:
        if _AlarmGuard.thinking:
            raise _OutOfTime


Fault = tuple[int, str] | None
"""A bot fault to report with an answer: (wire ``FailureKind``, detail), or None."""

ENV_SEED = "TICHU_ARENA_SEED"


class BotError(Exception):
    """The bot failed (raised, or gave an illegal answer) and ``strict`` is set."""


@dataclass
class ClientConfig:
    """Where and how to connect; see ``sdk.run`` for the environment variables."""

    server: str
    token: str = ""
    bot_key: str = ""
    name: str = ""
    results_only: bool = True
    connect_timeout_s: float = 30.0
    reconnect_s: float = 30.0
    safety_ms: int = 25
    threaded: bool = False
    strict: bool = False


class _Session:
    """Outcome of one stream: its final status and whether it got a ``Welcome``."""

    def __init__(self) -> None:
        self.code = grpc.StatusCode.OK
        self.details = ""
        self.welcomed = False


class BotClient:
    """Plays ``bot`` on the seat that ``config`` names, over as many streams as it takes."""

    def __init__(self, bot: Bot, config: ClientConfig) -> None:
        if not config.token and not config.bot_key:
            raise ValueError("a seat token or a bot key is needed (TICHU_ARENA_TOKEN)")
        self.bot = bot
        self.config = config
        self.token = config.token
        self.options = Options()
        self.seat: int | None = None
        self.grace_s = config.reconnect_s
        self.matches = 0
        self.decisions = 0
        self.bot_errors = 0
        self._cache = HistoryCache()
        self._pool = (
            concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="bot")
            if config.threaded
            else None
        )
        self._busy: concurrent.futures.Future[tuple[pb.Action, Fault]] | None = None
        self._alarm = False
        self._open: tuple[pb.DecisionRequest, Observation, bool] | None = None

    # ------------------------------------------------------------------ connection

    async def run(self) -> int:
        """Plays until the referee closes the stream; returns the process exit code."""
        if self._pool is None:
            self._alarm = _AlarmGuard.acquire()
            if not self._alarm:
                log.warning("no clock guard: the client does not run in the main thread")
        try:
            async with grpc.aio.insecure_channel(
                self.config.server, options=CHANNEL_OPTIONS
            ) as channel:
                play = channel.stream_stream(
                    PLAY_METHOD,
                    request_serializer=pb.BotMessage.SerializeToString,
                    response_deserializer=pb.RefereeMessage.FromString,
                )
                return await self._connect_loop(play)
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
            if self._alarm:
                _AlarmGuard.release()
                self._alarm = False

    async def _connect_loop(self, play: Any) -> int:
        resume = False
        delay = 0.05
        limit = time.monotonic() + self.config.connect_timeout_s
        while True:
            session = await self._session(play, resume)
            code = session.code
            if code is grpc.StatusCode.OK:
                log.info("stream closed by the referee after %d match(es)", self.matches)
                return EXIT_OK
            if code is grpc.StatusCode.ABORTED:
                log.warning("another stream took over this seat: %s", session.details)
                return EXIT_OK
            if session.welcomed:
                # The stream had a seat: resume it within the grace period.
                resume = bool(self.token)
                limit = time.monotonic() + self.grace_s
                delay = 0.05
            # gRPC Core sometimes reports a stream cut under it as INTERNAL or UNKNOWN rather
            # than UNAVAILABLE: once seated, treat those as a dropped connection too.
            retry = code is _RETRY or (session.welcomed and code in _RETRY_SEATED)
            if not retry or time.monotonic() + delay > limit:
                log.error("stream ended with %s: %s", code.name, session.details)
                return EXIT_FAILED
            log.warning("stream ended with %s (%s); retrying", code.name, session.details)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    def _hello(self, resume: bool) -> pb.BotMessage:
        msg = pb.BotMessage()
        h = msg.hello
        h.protocol_version = PROTOCOL_VERSION
        h.bot_name = (self.config.name or self.bot.name)[:_NAME_LIMIT]
        h.results_only = self.config.results_only
        if self.token:
            h.seat_token = self.token
            h.resume = resume
        else:
            h.bot_key = self.config.bot_key
        return msg

    async def _session(self, play: Any, resume: bool) -> _Session:
        session = _Session()
        call = play()
        self._open = None
        try:
            await call.write(self._hello(resume))
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    break
                await self._handle(call, msg, session)
        except grpc.aio.AioRpcError as e:
            session.code = e.code()
            session.details = e.details() or ""
            return session
        except (asyncio.InvalidStateError, grpc.aio.UsageError):
            pass  # a write after the call ended: its status says why
        session.code = await call.code()
        session.details = await call.details() or ""
        return session

    # ------------------------------------------------------------------ messages

    async def _handle(self, call: Any, msg: pb.RefereeMessage, session: _Session) -> None:
        which = msg.WhichOneof("payload")
        if which == "decision":
            await self._decide(call, msg.decision)
        elif which == "event":
            self._event(msg.event)
        elif which == "welcome":
            session.welcomed = True
            self._welcome(msg.welcome)
        elif which == "error":
            await self._error(call, msg.error)
        elif which == "waiting":
            queued = msg.waiting.bots_waiting
            log.info("waiting for a table (%d bot%s queued)", queued, "" if queued == 1 else "s")

    def _welcome(self, w: pb.Welcome) -> None:
        self.options = decode_options(w.rules)
        if w.seat_token:
            self.token = w.seat_token
        if w.policy.reconnect_grace_ms:
            self.grace_s = w.policy.reconnect_grace_ms / 1000.0
        new_match = not w.resumed or self.seat is None
        self.seat = w.seat
        self._cache = HistoryCache()
        if new_match:
            self.matches += 1
            log.info(
                "match %d at table %s, seat %d (referee %s, protocol %s)",
                self.matches,
                w.table_id,
                w.seat,
                w.server_version,
                w.protocol_version,
            )
            seed = w.seed if w.HasField("seed") else _env_seed()
            self._guard("reseed", self.bot.reseed, seed)
            self._guard("on_match_start", self.bot.on_match_start, w.seat)
        else:
            log.info("resumed seat %d at table %s", w.seat, w.table_id)

    def _event(self, ev: pb.Event) -> None:
        kind = ev.WhichOneof("kind")
        if kind == "match_end":
            r = ev.match_end
            scores = decode_scores(r.scores)
            log.info(
                "match over after %d hand(s): %d-%d (%s)",
                r.hands_played,
                scores[0],
                scores[1],
                pb.Termination.Name(r.termination),
            )
            self._guard("on_match_end", self.bot.on_match_end, scores)
        elif kind == "failure" and ev.failure.seat == self.seat:
            f = ev.failure
            log.warning(
                "referee reports %s for this seat: %s (%s)",
                pb.FailureKind.Name(f.kind),
                pb.FailureOutcome.Name(f.outcome),
                f.detail,
            )

    async def _error(self, call: Any, err: pb.Error) -> None:
        log.warning("referee rejected a message: %s: %s", pb.ErrorCode.Name(err.code), err.message)
        op = self._open
        if err.fatal or err.code not in _ANSWER_AGAIN or op is None:
            return
        if err.request_id != op[0].request_id or op[2]:
            return
        req, obs, _ = op
        self._open = (req, obs, True)
        self.bot_errors += 1
        fault = (pb.FAILURE_KIND_BAD_ANSWER, f"rejected by the referee: {err.message}")
        await call.write(self._answer_msg(req, _default(obs), fault))

    # ------------------------------------------------------------------ decisions

    async def _decide(self, call: Any, req: pb.DecisionRequest) -> None:
        received = time.monotonic()
        try:
            obs = decode_request(req, options=self.options, cache=self._cache)
        except Exception:
            log.error(
                "cannot read request %d; not answering\n%s", req.request_id, traceback.format_exc()
            )
            return
        self.decisions += 1
        budget = (req.deadline_ms + req.bank_ms_left - self.config.safety_ms) / 1000.0
        self.bot.deadline_ms = float(req.deadline_ms)
        self.bot.time_left_ms = max(0.0, budget * 1000.0)
        if self._pool is None:
            answer, fault = self._ask_inline(obs, received + budget)
        else:
            answer, fault = await self._ask_threaded(obs, received + budget)
        self._open = (req, obs, False)
        await call.write(self._answer_msg(req, answer, fault))

    def _ask_inline(self, obs: Observation, until: float) -> tuple[pb.Action, Fault]:
        """Asks the bot in this thread, under an alarm that interrupts it at ``until``."""
        left = until - time.monotonic()
        armed = self._alarm and left > 0
        if armed:
            signal.setitimer(signal.ITIMER_REAL, left)
        _AlarmGuard.thinking = True
        try:
            return self._ask(obs)
        except _OutOfTime:
            return self._late(obs)
        finally:
            _AlarmGuard.thinking = False
            if armed:
                signal.setitimer(signal.ITIMER_REAL, 0)

    def _late(
        self, obs: Observation, why: str = "did not answer in time"
    ) -> tuple[pb.Action, Fault]:
        self.bot_errors += 1
        where = f"hand {obs.hand_no + 1}, {obs.phase.name.lower()} decision"
        log.error("the bot %s (%s): default answer", why, where)
        return _default(obs), (pb.FAILURE_KIND_LATE, f"{why} ({where})")

    async def _ask_threaded(self, obs: Observation, until: float) -> tuple[pb.Action, Fault]:
        assert self._pool is not None
        busy = self._busy
        if busy is not None and not busy.done():
            # The bot is still thinking about an earlier decision; give it the time left.
            await asyncio.wait([asyncio.wrap_future(busy)], timeout=until - time.monotonic())
            if not busy.done():
                return self._late(obs, "was still busy with an earlier decision")
        fut = self._pool.submit(self._ask, obs)
        self._busy = fut
        left = until - time.monotonic()
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), left)
        except TimeoutError:
            return self._late(obs)

    def _ask(self, obs: Observation) -> tuple[pb.Action, Fault]:
        """Asks the bot, in the client's call order; a failure gives the default answer.

        Returns the answer encoded once, checked as the referee checks it (index, cards,
        exchange, Tichu flag), and why the SDK answered for the bot (``None``: it did not);
        the request's ids are filled in when it is sent.
        """
        try:
            action, call_tichu = self.bot.answer(obs)
            msg = encode_answer(action, obs, call_tichu and obs.may_call_tichu)
            decode_answer(msg, obs)
        except Exception as e:
            self.bot_errors += 1
            where = f"hand {obs.hand_no + 1}, {obs.phase.name.lower()}, seat {obs.seat}"
            if isinstance(e, AnswerError):
                log.error("the bot's answer is not legal (%s): %s; default answer", where, e)
                fault = (pb.FAILURE_KIND_BAD_ANSWER, f"{e} ({where})")
            else:
                log.error("the bot raised (%s); default answer\n%s", where, traceback.format_exc())
                fault = (pb.FAILURE_KIND_EXCEPTION, f"{type(e).__name__}: {e} ({where})")
            if self.config.strict:
                raise BotError(f"{where}: {e}") from e
            return _default(obs), fault
        return msg, None

    @staticmethod
    def _answer_msg(
        req: pb.DecisionRequest, answer: pb.Action, fault: Fault = None
    ) -> pb.BotMessage:
        """The answer to ``req`` as sent: the request's ids, and the SDK's fault if any."""
        answer.request_id = req.request_id
        answer.state_seq = req.state_seq
        msg = pb.BotMessage()
        msg.action.CopyFrom(answer)
        if fault is not None:
            kind, detail = fault
            msg.action.fault.kind = kind  # type: ignore[assignment]
            msg.action.fault.detail = detail
        return msg

    def _guard(self, hook: str, fn: Any, arg: Any) -> None:
        try:
            fn(arg)
        except Exception:
            self.bot_errors += 1
            log.error("the bot's %s raised\n%s", hook, traceback.format_exc())
            if self.config.strict:
                raise


def _env_seed() -> int | None:
    """The seat's seed from ``TICHU_ARENA_SEED`` (None when unset or not an integer)."""
    try:
        return int(os.environ[ENV_SEED])
    except (KeyError, ValueError):
        return None


# ---------------------------------------------------------------------- running a bot

DEFAULT_SERVER = "127.0.0.1:50051"
EXIT_USAGE = 2


def _parser(with_bot: bool) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m sdk" if with_bot else None,
        description="Play a Tichu Arena bot on one seat of a referee.",
    )
    if with_bot:
        p.add_argument("bot", help="the bot class as module:Class (e.g. mybot:MyBot)")
    p.add_argument("--server", help="referee host:port (TICHU_ARENA_SERVER)")
    p.add_argument("--token", help="seat token (TICHU_ARENA_TOKEN)")
    p.add_argument("--bot-key", help="bot key for open tables (TICHU_ARENA_BOT_KEY)")
    p.add_argument("--name", help="display name (TICHU_ARENA_NAME)")
    p.add_argument("--all-events", action="store_true", help="receive every public event")
    p.add_argument("--strict", action="store_true", help="stop at the bot's first error")
    p.add_argument(
        "--threaded",
        action="store_true",
        help="run the bot in a worker thread, never interrupted (slower by ~50-90 µs)",
    )
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    return p


def _default(obs: Observation) -> pb.Action:
    """The default answer to ``obs`` as a wire answer (no Tichu call)."""
    return encode_answer(default_action(obs), obs)


def load_bot(spec: str) -> Bot:
    """Imports ``module:Class`` and returns a new instance (the class takes no arguments)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"expected module:Class, not {spec!r}")
    module = importlib.import_module(module_name)
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    bot = obj() if isinstance(obj, type) else obj
    if not isinstance(bot, Bot):
        raise TypeError(f"{spec} is not a Bot subclass")
    return bot


def _names_missing(spec: str, error: Exception) -> bool:
    """Whether ``error`` from ``load_bot(spec)`` says the spec names nothing (a bad spec, a
    module that does not exist, a missing attribute) rather than an import-time bug."""
    module_name, _, _ = spec.partition(":")
    if isinstance(error, ModuleNotFoundError):
        # The module itself (or a package on its path), not an import inside it.
        return error.name is not None and (
            module_name == error.name or module_name.startswith(error.name + ".")
        )
    # Anything else raised by load_bot itself (no frame of the bot's below it).
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code is not load_bot.__code__:
        tb = tb.tb_next
    return tb is not None and tb.tb_next is None


def _config(ns: argparse.Namespace, overrides: dict[str, str | None]) -> ClientConfig:
    env = os.environ

    def pick(key: str, var: str) -> str:
        return overrides.get(key) or getattr(ns, key, None) or env.get(var, "")

    return ClientConfig(
        server=pick("server", "TICHU_ARENA_SERVER") or DEFAULT_SERVER,
        token=pick("token", "TICHU_ARENA_TOKEN"),
        bot_key=pick("bot_key", "TICHU_ARENA_BOT_KEY"),
        name=pick("name", "TICHU_ARENA_NAME"),
        results_only=not ns.all_events,
        strict=ns.strict,
        threaded=ns.threaded,
    )


def _setup_logging(level: str) -> None:
    if not logging.getLogger().handlers:
        logging.basicConfig(
            stream=sys.stderr,
            level=level.upper(),
            format="%(asctime)s %(name)s %(levelname)s %(message)s",
        )


def _play(bot: Bot, config: ClientConfig) -> int:
    if not config.token and not config.bot_key:
        print(
            "error: no seat token: set TICHU_ARENA_TOKEN (or --token), or a bot key"
            " for an open table (TICHU_ARENA_BOT_KEY, --bot-key)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    client = BotClient(bot, config)
    # A bot process lives for its matches, as the referee does (about 4 % more decisions per
    # second with 32 bot processes on 2 cores from freezing the start-up heap alone).
    tune_gc()
    try:
        code = run_loop(client.run())
    except BotError as e:
        print(f"error: the bot failed: {e}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_FAILED
    if client.bot_errors:
        logging.getLogger("sdk").warning(
            "%d bot error(s) were answered with default actions", client.bot_errors
        )
    return code


def run(
    bot: Bot,
    *,
    server: str | None = None,
    token: str | None = None,
    bot_key: str | None = None,
    name: str | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    """Plays ``bot`` until the referee closes the stream; returns the exit code.

    Use it at the end of a bot script: ``raise SystemExit(sdk.run(MyBot()))``. Flags in
    ``argv`` (default ``sys.argv[1:]``; unknown ones are left alone) and the environment
    fill what the keywords leave out.
    """
    ns, _ = _parser(False).parse_known_args(sys.argv[1:] if argv is None else list(argv))
    _setup_logging(ns.log_level)
    overrides = {"server": server, "token": token, "bot_key": bot_key, "name": name}
    return _play(bot, _config(ns, overrides))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sdk module:Class [flags]``."""
    ns = _parser(True).parse_args(argv)
    _setup_logging(ns.log_level)
    try:
        bot = load_bot(ns.bot)
    except Exception as e:
        # An import-time bug is the bot author's to fix: show where it happened. A module or
        # class that is not there is a usage error: one line is the whole story.
        if not _names_missing(ns.bot, e):
            traceback.print_exc(file=sys.stderr)
        print(f"error: cannot load bot {ns.bot!r}: {e}", file=sys.stderr)
        return EXIT_USAGE
    return _play(bot, _config(ns, {}))
