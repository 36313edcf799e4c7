"""Legal-play counts ("perft") read from ``data/play_counts.txt`` and checked against the engine.

Each data line fixes a hand, the play to beat and the active wish, and gives the number of
legal actions by kind with a hand-derived sum as a comment; the format is documented at the
top of the data file. The loader checks the comment's arithmetic as well as the engine.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.rules import Combo, Match, Play, combinations, parse_cards, parse_play
from arena.rules.cards import CARD_RANKS, FULL_DECK, PHOENIX_BIT, SPECIALS, Mask, cards_of, mask_of
from arena.rules.combos import parse_rank
from arena.rules.position import position

DATA = Path(__file__).parent / "data" / "play_counts.txt"

KIND_NAMES: dict[str, int] = {c.name.lower(): int(c) for c in Combo}

# The words a derivation comment may use for each kind (after dropping a plural ending).
_COMMENT_WORDS: dict[str, str] = {
    "pass": "pass",
    "dog": "dog",
    "single": "single",
    "pair": "pair",
    "triple": "triple",
    "step": "steps",
    "full house": "full_house",
    "straight": "straight",
    "four-bomb": "four_bomb",
    "four bomb": "four_bomb",
    "flush bomb": "flush_bomb",
    "straight flush": "flush_bomb",
}


@dataclass(frozen=True)
class CountCase:
    """One line of the table: a position and the legal-action counts expected in it."""

    name: str
    line: int
    hand: Mask
    trick: tuple[Play, ...]
    wish: int
    total: int
    kinds: dict[str, int]
    comment: str


def parse_table(text: str) -> tuple[Play, ...]:
    """Reads the table field: ``-``, or plays lowest first separated by ``>``, each in
    ``parse_play`` notation read against the one below and optionally preceded by its kind."""
    t = text.strip()
    if t == "-":
        return ()
    trick: list[Play] = []
    for part in t.split(">"):
        first, _, rest = part.strip().partition(" ")
        kind = first.lower() if first.lower() in KIND_NAMES else None
        play = parse_play(rest if kind else part, trick[-1] if trick else None)
        if kind is not None and play.kind != KIND_NAMES[kind]:
            raise ValueError(f"table {part!r} reads as {play.describe()}, not a {first}")
        trick.append(play)
    return tuple(trick)


def comment_counts(comment: str) -> tuple[dict[str, int], int]:
    """Reads ``<n> <kind words> + ... = <total>`` into per-kind counts and the stated total."""
    bare = re.sub(r"\([^)]*\)", "", comment)
    lhs, sep, rhs = bare.rpartition("=")
    if not sep:
        raise ValueError(f"comment {comment!r} has no '= total'")
    counts: Counter[str] = Counter()
    for term in lhs.split("+"):
        m = re.fullmatch(r"\s*(\d+)\s+([a-z -]+?)\s*", term.lower())
        if not m:
            raise ValueError(f"term {term!r} of {comment!r} is not '<n> <kind>'")
        words = m.group(2)
        for ending in ("es", "s"):
            if words.endswith(ending) and words[: -len(ending)] in _COMMENT_WORDS:
                words = words[: -len(ending)]
                break
        if words not in _COMMENT_WORDS:
            raise ValueError(f"unknown kind {m.group(2)!r} in {comment!r}")
        counts[_COMMENT_WORDS[words]] += int(m.group(1))
    return dict(counts), int(rhs.strip())


def load_cases(path: Path = DATA) -> list[CountCase]:
    """Parses the data file; raises ``ValueError`` naming the line on any malformed case."""
    cases: list[CountCase] = []
    for no, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            body, sep, comment = line.partition("#")
            if not sep:
                raise ValueError("missing the hand-derived '# ...' comment")
            fields = [f.strip() for f in body.split("|")]
            if len(fields) != 5:
                raise ValueError(f"expected 5 '|' fields, got {len(fields)}")
            name, hand, table, wish, counts = fields
            if not re.fullmatch(r"\w+", name):
                raise ValueError(f"bad case name {name!r}")
            total_text, *kind_texts = counts.split()
            kinds: dict[str, int] = {}
            for item in kind_texts:
                kind, _, n = item.partition("=")
                if kind not in KIND_NAMES or kind in kinds:
                    raise ValueError(f"bad or repeated kind {kind!r}")
                kinds[kind] = int(n)
            cases.append(
                CountCase(
                    name=name,
                    line=no,
                    hand=parse_cards(hand),
                    trick=parse_table(table),
                    wish=0 if wish == "-" else parse_rank(wish),
                    total=int(total_text),
                    kinds=kinds,
                    comment=comment.strip(),
                )
            )
        except ValueError as e:  # InvalidActionError is a ValueError too
            raise ValueError(f"{path.name}:{no}: {e}") from e
    return cases


def build_position(hand: Mask, trick: tuple[Play, ...], wish: int) -> Match:
    """Seat 0 to act holding ``hand`` on ``trick`` (played by seats 3, 2, 1 back from the top)
    with ``wish`` open.

    Seats 1..3 hold three natural cards each, cards of the wished rank first, so a wish the
    seat to act cannot fulfil is still open; the rest lie in won piles.
    """
    table = sum(p.cards for p in trick)
    spare = sorted(
        cards_of(FULL_DECK & ~hand & ~table & ~SPECIALS), key=lambda c: CARD_RANKS[c] != wish
    )
    others = [mask_of(spare[k : k + 3]) for k in (0, 3, 6)]
    seats = [3 - k for k in range(len(trick))][::-1]
    return position(
        [hand, *others], trick=list(zip(seats, trick, strict=True)), to_act=0, wish=wish
    )


CASES = load_cases()


def test_table_is_well_formed() -> None:
    """Names are unique, counts add up, and the table covers every kind at least once."""
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    assert len(CASES) >= 40
    for c in CASES:
        assert sum(c.kinds.values()) == c.total, c.name
        assert all(n > 0 for n in c.kinds.values()), c.name
    seen = {k for c in CASES for k in c.kinds}
    assert seen == set(KIND_NAMES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_derivation_comment_matches(case: CountCase) -> None:
    """The hand-derived sum in the comment adds up and names the same per-kind counts."""
    counts, total = comment_counts(case.comment)
    assert sum(counts.values()) == total, f"line {case.line}: terms do not add up to {total}"
    assert total == case.total, f"line {case.line}"
    assert counts == case.kinds, f"line {case.line}"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_play_counts(case: CountCase) -> None:
    """The engine offers exactly the counted legal actions in the position."""
    m = build_position(case.hand, case.trick, case.wish)
    assert (m.seat, m.hands[0], m.wish) == (0, case.hand, case.wish)
    assert m.top == (case.trick[-1] if case.trick else None)
    legal = m.legal_actions()
    got = Counter(Combo(p.kind).name.lower() for p in legal if isinstance(p, Play))
    assert len(legal) == sum(got.values()), "non-play action in a play decision"
    assert len(set(legal)) == len(legal), "duplicate legal actions"
    assert list(legal) == sorted(legal), "legal actions are not in canonical order"
    assert (len(legal), dict(got)) == (case.total, case.kinds)
    for p in legal:
        assert isinstance(p, Play) and not p.cards & ~case.hand


def test_loader_rejects_bad_arithmetic(tmp_path: Path) -> None:
    """A comment whose terms do not add up, or a miscounted line, is caught."""
    assert comment_counts("2 singles + 1 pair = 3") == ({"single": 2, "pair": 1}, 3)
    counts, total = comment_counts("2 singles + 1 pair = 4")
    assert sum(counts.values()) != total
    bad = tmp_path / "bad.txt"
    bad.write_text("x | 2j | - | - | 2 single=2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="comment"):
        load_cases(bad)
    bad.write_text("x | 2j | - | - | 2 single=2  # 2 singles = 2\n", encoding="utf-8")
    (case,) = load_cases(bad)
    m = build_position(case.hand, case.trick, case.wish)
    assert len(m.legal_actions()) != case.total


def test_frohlfing_divergence_is_the_phoenix_pair_full_houses() -> None:
    """Of the big hand's 1,684 plays, 108 are full houses whose pair holds the Phoenix.

    frohlfing/tichu counts 1,576 for this hand because it omits exactly these; docs/rules.md §5
    lets the Phoenix complete either half of a full house.
    """
    (case,) = [c for c in CASES if c.name == "lead_big_phoenix_5_4444_3333_2222"]
    plays = combinations(case.hand)
    in_pair = [
        p
        for p in plays
        if p.kind == Combo.FULL_HOUSE and p.cards & PHOENIX_BIT and p.phoenix_rank != p.rank
    ]
    assert len(in_pair) == 108
    assert len(plays) - len(in_pair) == 1576
