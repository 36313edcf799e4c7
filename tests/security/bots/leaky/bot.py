"""A buggy bot whose failures quote its hand: the viewer must show them to its seat alone.

Its first play of each hand raises an exception naming its cards (a public failure whose
detail quotes them); every bomb window raises too (a private failure: that it happened says
the seat holds a bomb). The SDK reports each as a fault and answers by default.
"""

from __future__ import annotations

import sdk
from arena.rules import Phase, card_name
from sdk.testing import RandomBot


def cards(mask: int) -> str:
    return " ".join(card_name(c) for c in range(56) if mask >> c & 1)


class LeakyBot(RandomBot):
    """Random answers, but failures that quote the bot's hand."""

    def __init__(self) -> None:
        super().__init__()
        self.hands_failed: set[int] = set()

    def act(self, obs):  # type: ignore[no-untyped-def]
        if obs.phase is Phase.BOMB_WINDOW:
            raise RuntimeError(f"PRIVATE-BOMB holding {cards(obs.hand)}")
        if obs.phase is Phase.PLAY and obs.hand_no not in self.hands_failed:
            self.hands_failed.add(obs.hand_no)
            raise RuntimeError(f"PUBLIC-DETAIL holding {cards(obs.hand)}")
        return super().act(obs)


if __name__ == "__main__":
    raise SystemExit(sdk.run(LeakyBot()))
