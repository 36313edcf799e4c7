"""Tests for the wire contract: generated code, message round trips, service shape, docs."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor as _descriptor
from google.protobuf.message import Message

from arena.wire import FIGURE_COUNT, FIGURE_MASK_BYTES, PROTOCOL_VERSION, pb, pb_grpc
from arena.wire.values import figure_mask
from tests.helpers import ROOT

GEN_SCRIPT = ROOT / "scripts" / "gen_proto.py"
PROTO_FILE = ROOT / "proto" / "tichu" / "arena" / "v1" / "arena.proto"
DOC_FILE = ROOT / "docs" / "protocol.md"


def _load_gen_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_proto", GEN_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mask(*card_ids: int) -> int:
    """Returns the card-set mask of the given card ids."""
    result = 0
    for card in card_ids:
        result |= 1 << card
    return result


# ---------------------------------------------------------------------------
# Generated code
# ---------------------------------------------------------------------------


def test_generated_code_is_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(GEN_SCRIPT), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "up to date" in result.stdout


def test_generation_is_reproducible() -> None:
    gen = _load_gen_script()
    first = gen.fresh_snapshot()
    second = gen.fresh_snapshot()
    assert first == second
    assert sorted(first) == [
        "__init__.py",
        "tichu/__init__.py",
        "tichu/arena/__init__.py",
        "tichu/arena/v1/__init__.py",
        "tichu/arena/v1/arena_pb2.py",
        "tichu/arena/v1/arena_pb2.pyi",
        "tichu/arena/v1/arena_pb2_grpc.py",
        "tichu/arena/v1/arena_pb2_grpc.pyi",
    ]
    for name, content in first.items():
        assert b"from tichu" not in content, name
        assert b"import tichu" not in content, name


def test_check_reports_stale_tree(tmp_path: Path) -> None:
    gen = _load_gen_script()
    fresh = {"a/x.py": b"new", "b.pyi": b"same", "gone.py": b"old"}
    (tmp_path / "b.pyi").write_bytes(b"same")
    (tmp_path / "gone.py").write_bytes(b"")
    (tmp_path / "extra.py").write_bytes(b"")
    assert gen.diff_trees(fresh, gen.snapshot(tmp_path)) == [
        "missing: a/x.py",
        "not generated (stale): extra.py",
        "differs: gone.py",
    ]
    assert gen.sync(fresh, tmp_path) == [
        "created: a/x.py",
        "removed: extra.py",
        "updated: gone.py",
    ]
    assert gen.snapshot(tmp_path) == fresh


@pytest.mark.parametrize(
    ("line", "package", "expected"),
    [
        (
            "from tichu.arena.v1 import arena_pb2 as x\n",
            ("tichu", "arena", "v1"),
            "from . import arena_pb2 as x\n",
        ),
        (
            "from tichu.common.v1 import cards_pb2\n",
            ("tichu", "arena", "v1"),
            "from ...common.v1 import cards_pb2\n",
        ),
        (
            "from google.protobuf import descriptor as _descriptor\n",
            ("tichu", "arena", "v1"),
            "from google.protobuf import descriptor as _descriptor\n",
        ),
    ],
)
def test_rewrite_imports(line: str, package: tuple[str, ...], expected: str) -> None:
    gen = _load_gen_script()
    assert gen.rewrite_imports(line, package, frozenset({"tichu"})) == expected


def test_rewrite_imports_rejects_plain_import() -> None:
    gen = _load_gen_script()
    with pytest.raises(gen.GenerationError):
        gen.rewrite_imports("import tichu.arena.v1.arena_pb2\n", ("tichu",), frozenset({"tichu"}))


# ---------------------------------------------------------------------------
# Descriptor shape
# ---------------------------------------------------------------------------


def test_package_and_service() -> None:
    assert pb.DESCRIPTOR.package == "tichu.arena.v1"
    assert pb.DESCRIPTOR.name == "tichu/arena/v1/arena.proto"
    assert list(pb.DESCRIPTOR.services_by_name) == ["Referee"]
    service = pb.DESCRIPTOR.services_by_name["Referee"]
    assert service.full_name == "tichu.arena.v1.Referee"
    assert [m.name for m in service.methods] == ["Play"]
    play = service.methods_by_name["Play"]
    assert play.client_streaming and play.server_streaming
    assert play.input_type.full_name == "tichu.arena.v1.BotMessage"
    assert play.output_type.full_name == "tichu.arena.v1.RefereeMessage"
    assert hasattr(pb_grpc, "RefereeStub")
    assert hasattr(pb_grpc, "RefereeServicer")
    assert hasattr(pb_grpc, "add_RefereeServicer_to_server")


def test_envelopes() -> None:
    def cases(message: type[Message]) -> list[str]:
        return [f.name for f in message.DESCRIPTOR.oneofs_by_name["payload"].fields]

    assert cases(pb.BotMessage) == ["hello", "action"]
    assert cases(pb.RefereeMessage) == ["welcome", "waiting", "decision", "event", "error"]
    event_kinds = [f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields]
    assert event_kinds == [
        "hand_started",
        "grand_tichu_revealed",
        "tichu_called",
        "exchange_done",
        "played",
        "passed",
        "wish_made",
        "wish_fulfilled",
        "trick_won",
        "dragon_given",
        "player_out",
        "hand_end",
        "match_end",
        "failure",
    ]


def _upper_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def test_enums_start_unspecified_and_are_prefixed() -> None:
    assert pb.DESCRIPTOR.enum_types_by_name
    for enum in pb.DESCRIPTOR.enum_types_by_name.values():
        prefix = _upper_snake(enum.name)
        assert enum.values[0].number == 0
        assert enum.values[0].name == f"{prefix}_UNSPECIFIED"
        for value in enum.values:
            assert value.name.startswith(prefix + "_"), value.name


def test_combo_values_are_rules_kinds_plus_one() -> None:
    rules_kinds = [
        "PASS",
        "DOG",
        "SINGLE",
        "PAIR",
        "TRIPLE",
        "STEPS",
        "FULL_HOUSE",
        "STRAIGHT",
        "FOUR_BOMB",
        "FLUSH_BOMB",
    ]
    for kind, name in enumerate(rules_kinds):
        assert pb.Combo.Value(f"COMBO_{name}") == kind + 1
    assert len(pb.Combo.keys()) == len(rules_kinds) + 1


def test_decision_kinds() -> None:
    assert pb.DecisionKind.keys() == [
        "DECISION_KIND_UNSPECIFIED",
        "DECISION_KIND_GRAND_TICHU",
        "DECISION_KIND_EXCHANGE",
        "DECISION_KIND_PLAY",
        "DECISION_KIND_BOMB_WINDOW",
        "DECISION_KIND_WISH",
        "DECISION_KIND_DRAGON_GIFT",
    ]


def test_no_field_numbers_reused_or_sparse_by_accident() -> None:
    for message in pb.DESCRIPTOR.message_types_by_name.values():
        numbers = [f.number for f in message.fields]
        assert len(numbers) == len(set(numbers)), message.name
        assert sorted(numbers) == list(range(1, len(numbers) + 1)), message.name


# ---------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------


def _sample_play() -> pb.Play:
    # 8 8 5 5 + Phoenix read as 888-55.
    return pb.Play(
        combo=pb.COMBO_FULL_HOUSE,
        length=5,
        rank=8,
        cards=mask(26, 27, 14, 15, 55),
        phoenix_rank=8,
    )


def _sample_scores() -> pb.Scores:
    return pb.Scores(
        team_points=[350, -100], victory_points=[2, 1, 2, 1], player_points=[5, 6, 7, 8]
    )


def _sample_hand_result() -> pb.HandResult:
    return pb.HandResult(
        hand_number=3,
        finishing_order=[2, 0],
        double_victory=True,
        card_points=[0, 0],
        bet_points=[200, 0],
        hand_points=[400, 0],
        bets=[pb.BetResult(seat=2, grand=True, won=True, points=200)],
        victory_points=[2, 1],
        scores=_sample_scores(),
    )


def _sample_events() -> list[pb.Event]:
    """Returns one event per `Event.kind` case, in declaration order."""
    payloads: list[dict[str, Any]] = [
        {"hand_started": pb.HandStarted(seating=[0, 1, 2, 3])},
        {"grand_tichu_revealed": pb.GrandTichuRevealed(called=[False, True, False, False])},
        {"tichu_called": pb.TichuCalled(seat=2)},
        {"exchange_done": pb.ExchangeDone()},
        {"played": pb.Played(seat=3, play=_sample_play(), out_of_turn=True)},
        {"passed": pb.Passed(seat=1)},
        {"wish_made": pb.WishMade(seat=1, rank=9)},
        {"wish_fulfilled": pb.WishFulfilled(seat=2, rank=9)},
        {"trick_won": pb.TrickWon(seat=1, points=25, cards=mask(54, 46, 34))},
        {"dragon_given": pb.DragonGiven(from_seat=1, to_seat=2, points=35, cards=mask(54))},
        {"player_out": pb.PlayerOut(seat=2, place=1)},
        {"hand_end": _sample_hand_result()},
        {
            "match_end": pb.MatchResult(
                termination=pb.TERMINATION_FORFEIT,
                scores=_sample_scores(),
                winners=[0, 2],
                hands_played=7,
                given_up=[3],
                detail="seat 3 forfeited after 3 strikes",
            )
        },
        {
            "failure": pb.Failure(
                seat=3,
                kind=pb.FAILURE_KIND_TIMEOUT,
                outcome=pb.FAILURE_OUTCOME_DEFAULT_ACTION,
                request_id=17,
                strikes=1,
                detail="no answer in 1000 ms + 0 ms bank",
            )
        },
    ]
    return [
        pb.Event(state_seq=100 + i, hand_number=3, **payload) for i, payload in enumerate(payloads)
    ]


def _sample_view() -> pb.View:
    lead = pb.Play(combo=pb.COMBO_PAIR, length=2, rank=7, cards=mask(22, 25))
    passed = pb.Play(combo=pb.COMBO_PASS)
    bomb = pb.Play(combo=pb.COMBO_FOUR_BOMB, length=4, rank=3, cards=mask(6, 7, 8, 9))
    return pb.View(
        seat=1,
        hand_number=3,
        phase=pb.PHASE_PLAY,
        hand=mask(10, 30, 33, 46, 55),
        card_counts=[9, 5, 11, 8],
        grand_tichu=[False, False, False, True],
        tichu=[False, False, True, False],
        may_call_tichu=True,
        trick=pb.Trick(
            entries=[
                pb.TrickEntry(seat=0, play=lead),
                pb.TrickEntry(seat=1, play=passed),
                pb.TrickEntry(seat=3, play=bomb, out_of_turn=True),
            ],
            top=bomb,
            top_seat=3,
            points=5,
        ),
        wish_rank=9,
        turn_seat=1,
        finished=[2],
        given_to=[mask(2), 0, mask(3), mask(4)],
        received_from=[mask(7), 0, mask(8), mask(9)],
        won_points=[10, 0, 25, 5],
        played=mask(22, 25, 6, 7, 8, 9),
        scores=_sample_scores(),
        seating=[0, 1, 2, 3],
        history=_sample_events()[:3],
    )


def _sample_legal() -> pb.LegalActions:
    return pb.LegalActions(
        cards=[0, mask(30, 33), mask(30, 55), mask(33, 55), mask(46, 55)],
        combo=[pb.COMBO_PASS] + [pb.COMBO_PAIR] * 4,
        length=[0, 2, 2, 2, 2],
        rank=[0, 9, 9, 9, 13],
        phoenix_rank=[0, 0, 9, 9, 13],
        figure=[0, 25, 25, 25, 29],
        figure_mask=figure_mask([0, 25, 29]),
        values=[0, 2, 3],
    )


def _samples() -> list[Message]:
    hello = pb.Hello(
        protocol_version=PROTOCOL_VERSION,
        seat_token="tok-1",
        bot_name="greedy",
        resume=True,
        results_only=True,
    )
    lobby_hello = pb.Hello(protocol_version=PROTOCOL_VERSION, bot_key="key-1", bot_name="x")
    action = pb.Action(
        request_id=42,
        state_seq=57,
        choice_index=1,
        cards=mask(30, 33),
        call_tichu=True,
        exchange_cards=[0, 55, 2],
        fault=pb.BotFault(kind=pb.FAILURE_KIND_EXCEPTION, detail="KeyError: 3"),
    )
    welcome = pb.Welcome(
        seat=1,
        table_id="t-1",
        rules=pb.RulesOptions(
            target_score=1000, hand_count=9, grand_tichu=True, tournament_mode=True
        ),
        time=pb.TimeControl(decision_ms=1000, bank_ms_per_hand=10_000),
        policy=pb.FailurePolicy(
            max_strikes=3,
            max_rejections=2,
            reconnect_grace_ms=20_000,
            give_up=pb.GIVE_UP_FALLBACK_BOT,
        ),
        server_version="tichu-arena 0.1.0",
        protocol_version=PROTOCOL_VERSION,
        seat_token="tok-1",
        resumed=True,
        player_names=["a", "b", "c", "d"],
        seed=2**64 - 1,
    )
    decision = pb.DecisionRequest(
        request_id=42,
        state_seq=57,
        kind=pb.DECISION_KIND_PLAY,
        deadline_ms=1000,
        bank_ms_left=9000,
        view=_sample_view(),
        legal=_sample_legal(),
    )
    error = pb.Error(
        code=pb.ERROR_CODE_CARDS_MISMATCH,
        request_id=42,
        fatal=True,
        message="cards 0x1 != legal.cards[1]",
        ms_left=800,
    )
    referee_messages = [
        pb.RefereeMessage(welcome=welcome),
        pb.RefereeMessage(waiting=pb.Waiting(bots_waiting=3)),
        pb.RefereeMessage(decision=decision),
        pb.RefereeMessage(error=error),
        *(pb.RefereeMessage(event=event) for event in _sample_events()),
    ]
    return [
        pb.BotMessage(hello=hello),
        pb.BotMessage(hello=lobby_hello),
        pb.BotMessage(action=action),
        *referee_messages,
    ]


def _walk(message: Message) -> Iterator[tuple[Any, _descriptor.FieldDescriptor]]:
    """Yields (message type, field) for every field set anywhere inside message."""
    for field, value in message.ListFields():
        yield message.DESCRIPTOR, field
        if field.message_type is None:
            continue
        children = value if field.is_repeated else [value]
        for child in children:
            yield from _walk(child)


def test_round_trip_every_message_kind() -> None:
    for sample in _samples():
        data = sample.SerializeToString(deterministic=True)
        parsed = type(sample).FromString(data)
        assert parsed == sample
        assert parsed.SerializeToString(deterministic=True) == data


def test_samples_cover_every_message_and_field() -> None:
    seen_fields: set[str] = set()
    seen_messages: set[str] = set()
    for sample in _samples():
        seen_messages.add(sample.DESCRIPTOR.full_name)
        for message_type, field in _walk(sample):
            seen_messages.add(message_type.full_name)
            seen_fields.add(field.full_name)
            if field.message_type is not None:
                seen_messages.add(field.message_type.full_name)
    all_messages = pb.DESCRIPTOR.message_types_by_name.values()
    assert {m.full_name for m in all_messages} == seen_messages
    all_fields = {f.full_name for m in all_messages for f in m.fields}
    assert all_fields - seen_fields == set()


def test_optional_fields_have_presence() -> None:
    view = pb.View(turn_seat=0)
    assert view.HasField("turn_seat")
    assert not pb.View().HasField("turn_seat")
    assert pb.Action(cards=0).HasField("cards")
    assert not pb.Action().HasField("cards")
    assert not pb.View().HasField("trick")


def test_figure_mask_size() -> None:
    assert FIGURE_COUNT == 227
    assert FIGURE_MASK_BYTES == 29
    mask_bytes = _sample_legal().figure_mask
    assert mask_bytes[:4] == bytes([0x01, 0x00, 0x00, 0x22])


# ---------------------------------------------------------------------------
# The contract document
# ---------------------------------------------------------------------------

Figure = tuple[str, int, int | None]


def _enumerate_figures() -> list[Figure]:
    """Enumerates the figure space from the brief, independently of docs/protocol.md."""
    figures: list[Figure] = [("PASS", 0, None), ("DOG", 1, None)]
    figures += [("SINGLE", 1, rank) for rank in range(1, 16)]  # Mah Jong, 2..A, Dragon
    figures.append(("SINGLE (Phoenix)", 1, None))
    figures += [("PAIR", 2, rank) for rank in range(2, 15)]
    figures += [("TRIPLE", 3, rank) for rank in range(2, 15)]
    for pairs in range(2, 8):
        figures += [("STEPS", 2 * pairs, top) for top in range(pairs + 1, 15)]
    figures += [("FULL_HOUSE", 5, rank) for rank in range(2, 15)]
    for length in range(5, 15):  # the Mah Jong may be the 1
        figures += [("STRAIGHT", length, top) for top in range(length, 15)]
    figures += [("FOUR_BOMB", 4, rank) for rank in range(2, 15)]
    for length in range(5, 14):  # within 2..A
        figures += [("FLUSH_BOMB", length, top) for top in range(length + 1, 15)]
    return figures


_FIGURE_ROW = re.compile(r"^\| (\d+) \| (\d+) \| ([A-Z_]+(?: \(Phoenix\))?) \| (\d+) \| (.+?) \|$")


def test_figure_table_in_docs_matches_enumeration() -> None:
    figures = _enumerate_figures()
    assert len(figures) == FIGURE_COUNT
    documented: list[Figure] = []
    for line in DOC_FILE.read_text(encoding="utf-8").splitlines():
        match = _FIGURE_ROW.match(line)
        if match is None:
            continue
        first, last, combo, length, ranks = match.groups()
        assert int(first) == len(documented), line
        if ranks == "—":
            documented.append((combo, int(length), None))
        else:
            low, high = (int(r) for r in ranks.split("–"))
            documented += [(combo, int(length), rank) for rank in range(low, high + 1)]
        assert int(last) == len(documented) - 1, line
    assert documented == figures


def test_reference_figure_index_in_docs() -> None:
    text = DOC_FILE.read_text(encoding="utf-8")
    block = re.search(r"```python\n(def figure_index.*?)```", text, re.DOTALL)
    assert block is not None
    namespace: dict[str, Any] = {}
    exec(block.group(1), namespace)
    figure_index = namespace["figure_index"]
    phoenix = mask(55)
    for index, (combo, length, rank) in enumerate(_enumerate_figures()):
        if combo == "SINGLE (Phoenix)":
            for phoenix_rank in (1, 9, 14):
                assert figure_index(pb.COMBO_SINGLE, 1, phoenix_rank, phoenix) == index
            continue
        wire = pb.Combo.Value(f"COMBO_{combo}")
        assert figure_index(wire, length, rank or 0, mask(2)) == index, (combo, length, rank)
    assert _sample_legal().figure[1] == figure_index(pb.COMBO_PAIR, 2, 9, mask(30, 33))


def test_docs_name_every_message_field_and_enum_value() -> None:
    text = DOC_FILE.read_text(encoding="utf-8")
    missing = []
    for message in pb.DESCRIPTOR.message_types_by_name.values():
        missing += [name for name in [message.name] if f"`{name}`" not in text]
        missing += [f"{message.name}.{f.name}" for f in message.fields if f.name not in text]
    for enum in pb.DESCRIPTOR.enum_types_by_name.values():
        prefix = _upper_snake(enum.name) + "_"
        for value in enum.values[1:]:
            short = value.name.removeprefix(prefix)
            if value.name not in text and short not in text:
                missing.append(value.name)
    assert missing == []


def test_version_is_stated_in_proto_and_docs() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", PROTOCOL_VERSION)
    assert f"protocol version {PROTOCOL_VERSION}." in PROTO_FILE.read_text(encoding="utf-8")
    assert DOC_FILE.read_text(encoding="utf-8").startswith(
        f"# The Tichu Arena bot protocol, version {PROTOCOL_VERSION}\n"
    )
    assert PROTOCOL_VERSION.split(".")[0] == pb.DESCRIPTOR.package.rsplit(".v", 1)[1]


# ---------------------------------------------------------------------------
# A real stream
# ---------------------------------------------------------------------------


class _ScriptedReferee(pb_grpc.RefereeServicer):
    """Welcomes the bot, asks one PLAY decision, then ends the match."""

    async def Play(
        self,
        request_iterator: AsyncIterator[pb.BotMessage],
        context: grpc.aio.ServicerContext[pb.BotMessage, pb.RefereeMessage],
    ) -> AsyncIterator[pb.RefereeMessage]:
        async for message in request_iterator:
            case = message.WhichOneof("payload")
            if case == "hello":
                yield pb.RefereeMessage(welcome=pb.Welcome(seat=2, seat_token="t"))
                yield pb.RefereeMessage(
                    decision=pb.DecisionRequest(
                        request_id=1, state_seq=5, kind=pb.DECISION_KIND_PLAY, legal=_sample_legal()
                    )
                )
            elif case == "action":
                chosen = message.action.choice_index
                yield pb.RefereeMessage(
                    event=pb.Event(
                        state_seq=6,
                        played=pb.Played(seat=2, play=pb.Play(cards=message.action.cards)),
                    )
                )
                yield pb.RefereeMessage(
                    event=pb.Event(
                        state_seq=7,
                        match_end=pb.MatchResult(
                            termination=pb.TERMINATION_NORMAL, hands_played=chosen
                        ),
                    )
                )
                return


async def _play_one_match() -> list[pb.RefereeMessage]:
    server = grpc.aio.server()
    pb_grpc.add_RefereeServicer_to_server(_ScriptedReferee(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    received: list[pb.RefereeMessage] = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = pb_grpc.RefereeStub(channel).Play()
            await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=PROTOCOL_VERSION)))
            while True:
                reply = await call.read()
                if reply is grpc.aio.EOF:
                    break
                assert isinstance(reply, pb.RefereeMessage)
                received.append(reply)
                if reply.WhichOneof("payload") == "decision":
                    request = reply.decision
                    await call.write(
                        pb.BotMessage(
                            action=pb.Action(
                                request_id=request.request_id,
                                state_seq=request.state_seq,
                                choice_index=1,
                                cards=request.legal.cards[1],
                            )
                        )
                    )
            await call.done_writing()
            assert await call.code() == grpc.StatusCode.OK
    finally:
        await server.stop(None)
    return received


def test_stream_round_trip_over_grpc() -> None:
    received = asyncio.run(asyncio.wait_for(_play_one_match(), timeout=30))
    assert [m.WhichOneof("payload") for m in received] == ["welcome", "decision", "event", "event"]
    assert received[0].welcome.seat == 2
    assert received[2].event.played.play.cards == mask(30, 33)
    assert received[3].event.match_end.hands_played == 1
