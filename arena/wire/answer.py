"""A bot's answer on the wire: ``pb.Action`` picks an entry of the request's legal list.

``encode_answer`` is the SDK's side, ``decode_answer`` the referee's check of it (index range,
the optional cards echo, the exchange cards, the Tichu flag; docs/protocol.md section 10).
"""

from __future__ import annotations

from arena.rules.actions import Action, Exchange, Phase
from arena.rules.combos import Play
from arena.rules.errors import InvalidActionError
from arena.rules.observe import Observation
from arena.wire import pb

_new = tuple.__new__


class AnswerError(InvalidActionError):
    """An answer that does not fit its request; ``code`` is the wire ``ErrorCode`` to send."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def encode_answer(
    action: Action,
    obs: Observation,
    call_tichu: bool = False,
    *,
    request_id: int = 0,
    state_seq: int = 0,
) -> pb.Action:
    """The wire answer picking ``action`` (an entry of ``obs.legal``, or an ``Exchange``)."""
    msg = pb.Action(request_id=request_id, state_seq=state_seq, call_tichu=call_tichu)
    if obs.phase is Phase.EXCHANGE:
        if type(action) is not Exchange:
            raise AnswerError(
                f"{action!r} does not answer an exchange: give an Exchange of three cards",
                pb.ERROR_CODE_MALFORMED,
            )
        msg.exchange_cards.extend(action)
        return msg
    try:
        i = obs.legal.index(action)
    except ValueError:
        raise AnswerError(
            f"{action!r} is not among the {len(obs.legal)} legal answers to this"
            f" {obs.phase.name.lower().replace('_', ' ')} decision",
            pb.ERROR_CODE_MALFORMED,
        ) from None
    msg.choice_index = i
    if type(action) is Play:
        msg.cards = action[3]
    return msg


def decode_answer(msg: pb.Action, obs: Observation) -> tuple[Action, bool]:
    """The rules action a wire answer picks and its Tichu flag, or ``AnswerError``.

    Checks the index range, the optional cards echo, the exchange cards and the Tichu flag
    (docs/protocol.md section 10); ``request_id`` and ``state_seq`` are the referee's to check.
    """
    call = msg.call_tichu
    if call and not obs.may_call_tichu:
        raise AnswerError(
            f"call_tichu is set but seat {obs.seat} may not call Tichu now",
            pb.ERROR_CODE_TICHU_NOT_ALLOWED,
        )
    if obs.phase is Phase.EXCHANGE:
        cards = list(msg.exchange_cards)
        if len(cards) != 3:
            raise AnswerError(
                f"exchange_cards must hold 3 card ids, not {len(cards)}: {cards}",
                pb.ERROR_CODE_MALFORMED,
            )
        hand = obs.hand
        for x in cards:
            if not (x < 56 and hand >> x & 1):
                raise AnswerError(
                    f"card {x} in exchange_cards is not in seat {obs.seat}'s hand",
                    pb.ERROR_CODE_ILLEGAL_EXCHANGE,
                )
        if len(set(cards)) != 3:
            raise AnswerError(
                f"exchange_cards must be three different cards, not {cards}",
                pb.ERROR_CODE_ILLEGAL_EXCHANGE,
            )
        return _new(Exchange, (cards[0], cards[1], cards[2])), call
    legal = obs.legal
    i = msg.choice_index
    if i >= len(legal):
        raise AnswerError(
            f"choice_index {i} is out of range: the legal list has {len(legal)} entries",
            pb.ERROR_CODE_MALFORMED,
        )
    action = legal[i]
    if msg.HasField("cards") and type(action) is Play and msg.cards != action[3]:
        raise AnswerError(
            f"cards {msg.cards} do not match entry {i}, whose cards are {action[3]}",
            pb.ERROR_CODE_CARDS_MISMATCH,
        )
    return action, call


__all__ = ["AnswerError", "decode_answer", "encode_answer"]
