"""HeuristicBot: a planning, card-counting rule bot in the style of frohlfing's HeuristicAgent.

Every play decision compares the candidate plays by what they leave in hand and what they
win now. What they leave is the cost of the best partition of the rest of the hand
(``common.partition``: about the leads still needed; bombs kept whole, long low straights
and steps kept together). What they win is the chance that no opponent can beat them
(``common.odds``, from the unseen cards) times the value of the lead and of the points on
the table, plus the urgency of stopping an opponent who is about to go out or who called.
Around that sit the partnership rules (no overtaking a partner without a reason, support for
a partner's bet, the Dog led early to hand the partner the lead), the defence against
callers and players about to go out (urgency, bombs, high cards kept for the caller), and
bets from counted controls and losers (``common.strength``).

The constants below were tuned by paired duplicate runs against GreedyBot and in self-play
(``scripts/bot_strength.py``); values are in plan-cost units, about one lead each.
"""

from __future__ import annotations

from arena.rules import (
    DOG,
    DOG_K,
    DRAGON,
    DRAGON_BIT,
    MAHJONG,
    PAIR,
    PASS,
    PHOENIX,
    PHOENIX_BIT,
    RANK_MASKS,
    SINGLE,
    Exchange,
    Observation,
    Phase,
    Play,
    cards_of,
    points_of,
)
from example_bots.common.odds import Odds
from example_bots.common.partition import hand_cost, realize
from example_bots.common.ranks import POINT_RANKS, find_bombs, profile_of, rank_of, strength
from example_bots.common.strength import grand_score, hand_strength
from example_bots.common.table import (
    bet_alive,
    called,
    can_pass,
    opponents,
    owner,
    partner,
    plays_of,
    trick_points,
)
from sdk import Bot

LEAD = 0.55  # winning the lead now (the same for a caller: a boost measured worse)
POINT = 1 / 30  # one card point
KEEP_CONTROL = 0.05  # using a strong card now rather than later
OVERTAKE = 1.0  # taking a trick from the partner
PROTECT = 1.0  # raising the bar over the partner's play against an opponent going out
BOMB_KEEP = 0.9  # a bomb is worth keeping ...
BOMB_KEEP_PER_CARD = 0.08  # ... the more so the longer the hand still is
GO_OUT = 10.0
EXCHANGE_POOL = 8  # cards considered in pairs for the two opponents
LEAD_LENGTH = 0.15  # leading more cards at once: long combinations rarely get a follow
DOG_LEAD = -1.0  # adjustment to leading the Dog to an active partner
POINT_PASS = 1.25  # passing 5 points to an opponent (twice that for a 10 or a King)
DOG_PASS = -0.4  # passing the Dog to an opponent (kept for a partner who called Grand)
PRESSURE_FROM = 6  # opponents' card count where the pressure to shed cards starts
SHED_PRESSURE = 1.0  # playing on an opponent's trick rather than passing, at full pressure
CALLER_CONTROL = 4.0  # KEEP_CONTROL factor while an opponent's bet is alive
URGENCY_BY_COUNT = (0.0, 1.0, 0.8, 0.4, 0.25, 0.1)  # an opponent with n cards leads the trick
THREAT_SINGLE = 6.0  # leading a single into an opponent holding one card
SURE = 0.12  # a play beaten with at most this chance counts as a sure winner
# Bet thresholds on ``HandStrength.margin`` and ``grand_score`` (tuned by duplicate runs).
TICHU_MARGIN = 0.5
TICHU_MARGIN_CONTESTED = 1.25  # when an opponent has called
GRAND_SCORE = 3.5


class HeuristicBot(Bot):
    """Plans a partition, counts cards, calls bets on counted strength."""

    name = "heuristic"

    # ------------------------------------------------------------------ bets

    def grand_tichu(self, obs: Observation) -> bool:
        """Grand Tichu when the first eight cards hold enough controls (Dragon, Phoenix, As)."""
        return grand_score(obs.hand) >= GRAND_SCORE

    def call_tichu(self, obs: Observation) -> bool:
        """Tichu after the exchange when controls outnumber the losing combinations.

        Never next to a partner's bet (only one of two can go out first); a stricter bar when
        an opponent has bet, since they then fight for the lead as well.
        """
        if obs.phase is Phase.EXCHANGE or called(obs, partner(obs.seat)) or obs.out:
            return False
        need = TICHU_MARGIN
        if any(called(obs, o) for o in opponents(obs.seat)):
            need = TICHU_MARGIN_CONTESTED
        return hand_strength(obs.hand).margin >= need

    # ------------------------------------------------------------------ exchange

    def exchange(self, obs: Observation) -> Exchange:
        """A good card to the partner, low non-point cards to the opponents, bombs kept whole.

        With a strong hand the partner gets a card the plan can spare; otherwise the best
        card. The Dog goes to an opponent (for whom it is a lead spent on nothing), unless
        the partner called Grand Tichu: then it is kept to hand the partner the lead.
        """
        hand = obs.hand
        me = obs.seat
        mate = partner(me)
        strong = obs.grand[me] or hand_strength(hand).margin >= TICHU_MARGIN - 0.5
        bomb_cards = _bomb_cards(hand)
        if obs.grand[mate]:
            generosity = 3.0
        elif strong:
            generosity = 0.3
        else:
            generosity = 1.2
        cards = list(cards_of(hand))
        if strong and not obs.grand[mate]:
            # Keep the controls; spare the partner a good card the plan can do without.
            gifts = [c for c in cards if 10 <= rank_of(c) <= 13]
        else:
            gifts = [c for c in cards if _gift_value(c) >= 0.3]
        gifts = [c for c in gifts if c != DOG and not (1 << c) & bomb_cards]
        if not gifts:
            gifts = [c for c in cards if c != DOG] or cards
        best_score = float("inf")
        to_partner = gifts[-1]
        for c in gifts:
            score = hand_cost(hand & ~(1 << c)) - generosity * _gift_value(c)
            if score < best_score:
                best_score, to_partner = score, c
        rest = hand & ~(1 << to_partner)
        keep_dog = obs.grand[mate]  # the Dog hands the lead to a partner who called Grand
        pool = [c for c in cards_of(rest) if c not in (DRAGON, PHOENIX)]
        if len(pool) < 2:
            pool = list(cards_of(rest))
        # Pairs among the cards that are cheapest to give one at a time (keeps this fast).
        penalty = {c: _pass_penalty(c, keep_dog, bomb_cards) for c in pool}
        pool.sort(key=lambda c: hand_cost(rest & ~(1 << c)) + penalty[c])
        pool = pool[:EXCHANGE_POOL]
        best_pair = (pool[0], pool[1])
        best_score = float("inf")
        for i, a in enumerate(pool):
            for b in pool[i + 1 :]:
                score = hand_cost(rest & ~(1 << a) & ~(1 << b)) + penalty[a] + penalty[b]
                if score < best_score:
                    best_score, best_pair = score, (a, b)
        lo, hi = sorted(best_pair, key=lambda c: (rank_of(c) if c != DOG else -1, c))
        # The worse card (the lower, or the Dog) goes to an opponent who bet, else the next.
        nxt, prev = opponents(me)
        if obs.grand[prev] and not obs.grand[nxt]:
            return Exchange(hi, to_partner, lo)
        return Exchange(lo, to_partner, hi)

    # ------------------------------------------------------------------ play

    def play(self, obs: Observation) -> Play:
        """Leads from the plan or follows by value; see the module docstring."""
        plays = plays_of(obs)
        if not plays:
            return PASS
        ctx = _Context(obs)
        for p in plays:
            if p.cards == obs.hand and not ctx.mate_bet:
                return p
        if obs.top is None:
            return self._lead(ctx, plays)
        return self._follow(ctx, plays)

    def bomb(self, obs: Observation) -> Play:
        """Bombs out of turn to stop an opponent going out or a caller, or for a rich trick."""
        bombs = plays_of(obs)
        if not bombs or owner(obs) in (obs.seat, partner(obs.seat)):
            return PASS  # never over its own team's trick
        ctx = _Context(obs)
        best = min(bombs, key=lambda p: (p.kind, p.length, p.rank))
        value = ctx.follow_value(best, trick_points(obs))
        return best if value > 0 else PASS

    def wish(self, obs: Observation) -> int:
        """A rank it lacks: one it passed to an opponent, else the highest.

        Never a rank it holds (the wish would bind itself) nor the one it passed to its
        partner.
        """
        hand = obs.hand
        known_opp: set[int] = set()
        avoid: set[int] = set()
        if obs.given is not None:
            for k, c in enumerate(obs.given, 1):
                r = rank_of(c)
                if not 2 <= r <= 14 or obs.played >> c & 1:
                    continue
                if (obs.seat + k) & 3 == partner(obs.seat):
                    avoid.add(r)
                else:
                    known_opp.add(r)
        best, best_score = 0, 0.0
        for r in range(2, 15):
            if hand & RANK_MASKS[r] or r in avoid:
                continue
            left = (obs.unseen & RANK_MASKS[r]).bit_count()
            if not left and r not in known_opp:
                continue
            score = r + (4.0 if r in known_opp else 0.0) + 0.25 * left
            if score > best_score:
                best, best_score = r, score
        return best

    def gift(self, obs: Observation) -> int:
        """The Dragon trick to the opponent less likely to win: no live bet, more cards."""
        a, b = opponents(obs.seat)

        def keeps(o: int) -> tuple[bool, int]:
            return (not bet_alive(obs, o), obs.card_counts[o])

        return a if keeps(a) >= keeps(b) else b

    # ------------------------------------------------------------------ leading

    def _lead(self, ctx: _Context, plays: list[Play]) -> Play:
        obs = ctx.obs
        sure = self._sure_chain(ctx, plays)
        if sure is not None:
            return sure
        threat1 = any(obs.card_counts[o] == 1 for o in ctx.opps)
        threat2 = any(obs.card_counts[o] == 2 for o in ctx.opps)
        mate_count = obs.card_counts[ctx.mate]
        best: Play | None = None
        best_score = float("inf")
        for p in ctx.distinct(plays):
            rem = ctx.hand & ~p.cards
            score = hand_cost(rem) - LEAD_LENGTH * p.length
            if p.is_bomb and rem:
                score += 1.5
            if p.kind == DOG_K:
                score += self._dog_adjust(ctx)
            elif threat1 and p.kind == SINGLE:
                score += THREAT_SINGLE * ctx.beat(p)
            elif threat2 and p.kind == PAIR:
                score += 1.2 * ctx.beat(p)
            if 0 < mate_count <= 2 and not ctx.my_bet and p.length == mate_count:
                # Feed a partner about to go out: a low lead it can beat.
                score -= 0.6 * ctx.beat(p)
            if score < best_score:
                best, best_score = p, score
        return best if best is not None else plays[0]

    def _dog_adjust(self, ctx: _Context) -> float:
        """How much less (negative) or more to like leading the Dog now."""
        obs = ctx.obs
        if obs.card_counts[ctx.mate] == 0:
            return 1.5  # it would hand the lead to an opponent
        if ctx.mate_bet:
            return -1.0
        # The Dog keeps the lead in the team and sheds a card that can never follow.
        return DOG_LEAD

    def _sure_chain(self, ctx: _Context, plays: list[Play]) -> Play | None:
        """With at most one combination that can be beaten, lead the sure winners first."""
        parts = realize(ctx.hand)
        if len(parts) < 2:
            return None
        loose = [p for p in parts if p.kind != DOG_K and ctx.beat(p) > SURE]
        if len(loose) > 1:
            return None
        legal = set(plays)
        sure = [p for p in parts if p.kind != DOG_K and p not in loose and p in legal]
        if not sure:
            return None
        # Non-bombs first (a bomb also wins later), most certain first, longer first.
        return min(sure, key=lambda p: (p.is_bomb, ctx.beat(p), -p.length, p.rank))

    # ------------------------------------------------------------------ following

    def _follow(self, ctx: _Context, plays: list[Play]) -> Play:
        obs = ctx.obs
        passing = can_pass(obs)
        pts = trick_points(obs)
        best: Play | None = None
        best_value = 0.0 if passing else float("-inf")
        mates = owner(obs) == ctx.mate
        for p in ctx.distinct(plays):
            value = ctx.overtake_value(p) if mates else ctx.follow_value(p, pts)
            if value > best_value:
                best, best_value = p, value
        if best is None:
            return PASS if passing else plays[0]
        return best


class _Context:
    """One decision's view: hand, plan cost, seats, bets, and cached beat chances."""

    def __init__(self, obs: Observation) -> None:
        self.obs = obs
        self.hand = obs.hand
        self.seat = obs.seat
        self.mate = partner(obs.seat)
        self.opps = opponents(obs.seat)
        self.cost = hand_cost(obs.hand)
        self.odds = Odds(obs)
        self.my_bet = bet_alive(obs, obs.seat)
        self.mate_bet = bet_alive(obs, self.mate)
        self.opp_bet = any(bet_alive(obs, o) for o in self.opps)
        self.bomb_cards = _bomb_cards(obs.hand)
        fewest = min((obs.card_counts[o] for o in self.opps if obs.card_counts[o]), default=14)
        #: 0 while both opponents hold many cards, 1 when one holds a single card.
        self.pressure = max(0, PRESSURE_FROM - fewest) / (PRESSURE_FROM - 1)
        self._beat: dict[tuple[int, int, int, bool], float] = {}

    def beat(self, p: Play) -> float:
        """Chance an opponent can beat ``p`` (cached by shape)."""
        key = (p.kind, p.length, p.rank, p.cards == PHOENIX_BIT)
        v = self._beat.get(key)
        if v is None:
            v = self._beat[key] = self.odds.beat_chance(p)
        return v

    def distinct(self, plays: list[Play]) -> list[Play]:
        """One play per rank-level shape (suits only matter where a bomb is touched)."""
        seen: set[tuple[int, int, int, int, int]] = set()
        out = []
        for p in plays:
            key = (p.kind, p.rank, p.length, profile_of(p.cards), p.cards & self.bomb_cards)
            if p.cards & PHOENIX_BIT:
                key = (*key[:4], key[4] | PHOENIX_BIT)
            if key not in seen:
                seen.add(key)
                out.append(p)
        return out

    def urgency(self, who: int) -> float:
        """How much it matters to take the trick from opponent ``who`` now."""
        obs = self.obs
        n = obs.card_counts[who]
        if n == 0:
            return 0.0
        bet = bet_alive(obs, who)
        u = 0.8 if bet else 0.0
        near = URGENCY_BY_COUNT[n] if n < len(URGENCY_BY_COUNT) else 0.0
        u += near
        if n <= 2:
            if obs.card_counts[partner(who)] == 0:
                u += 3.0  # a double victory is close
            if bet:
                u += 1.5
            if (self.my_bet or self.mate_bet) and not obs.out:
                u += 1.5
        elif n <= 5 and bet:
            u += 0.5
        return u

    def follow_value(self, p: Play, pts: int) -> float:
        """Value of playing ``p`` over an opponent's trick, against passing (0)."""
        rem = self.hand & ~p.cards
        if not rem:
            return GO_OUT if not self.mate_bet else -1.0
        d = self.cost - hand_cost(rem)
        win = 1.0 - self.beat(p)
        who = owner(self.obs)
        gain = LEAD + self.urgency(who)
        own_pts = pts + points_of(p.cards)
        if p.cards == DRAGON_BIT:
            # The trick goes to an opponent; counting the Dragon's own 25 as well keeps it
            # back for a trick that matters (measured better than spending it freely).
            gain -= own_pts * POINT
        else:
            gain += own_pts * POINT
        value = d + win * gain + SHED_PRESSURE * self.pressure
        if p.is_bomb:
            value -= BOMB_KEEP + BOMB_KEEP_PER_CARD * self.hand.bit_count()
        elif p.length == 1:
            keep = KEEP_CONTROL
            if self.opp_bet and not bet_alive(self.obs, who):
                keep *= CALLER_CONTROL  # save the high cards for the caller's tricks
            value -= keep * _single_strength(p)
        return value

    def overtake_value(self, p: Play) -> float:
        """Value of playing ``p`` over the partner's trick, against passing (0).

        Mostly negative: the partner keeps the lead. Worth it to go out, to shed a weak
        card on a weak lead, or to raise the bar when an opponent could go out over the
        partner's play (all the more if that would seal a double victory).
        """
        obs = self.obs
        rem = self.hand & ~p.cards
        if not rem:
            return GO_OUT if not self.mate_bet else -1.0
        if p.is_bomb:
            return -1.0
        top = obs.top
        assert top is not None
        d = self.cost - hand_cost(rem)
        reach = max(2, top.length + 1)
        danger = max(
            (self.urgency(o) for o in self.opps if 0 < obs.card_counts[o] <= reach), default=0.0
        )
        protect = (self.beat(top) - self.beat(p)) * (0.3 + PROTECT * danger)
        weak_top = strength(top.kind, top.length, min(top.rank, 15)) < 0.15
        value = d + protect - OVERTAKE
        if not weak_top or obs.card_counts[self.mate] <= 3:
            value -= 1.0
        if self.mate_bet:
            value -= 1.0
        if p.length == 1:
            value -= KEEP_CONTROL * _single_strength(p)
        return value


def _single_strength(p: Play) -> float:
    if p.cards == PHOENIX_BIT:
        return 0.9
    if p.cards == DRAGON_BIT:
        return 1.0
    return strength(SINGLE, 1, p.rank)


def _bomb_cards(hand: int) -> int:
    cards = 0
    for b in find_bombs(hand):
        cards |= b.cards
    return cards


def _gift_value(c: int) -> float:
    """How much a card helps the partner who receives it."""
    if c == DRAGON:
        return 1.0
    if c == PHOENIX:
        return 0.9
    if c == MAHJONG:
        return 0.0
    return (0.0, 0.0, 0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.07, 0.1, 0.14, 0.22, 0.32, 0.48, 0.7)[
        rank_of(c)
    ]


def _pass_penalty(c: int, keep_dog: bool, bomb_cards: int) -> float:
    """What passing ``c`` to an opponent gives away, beyond the own plan's cost."""
    if c == DOG:
        return 1.0 if keep_dog else DOG_PASS
    if c == MAHJONG:
        return 0.15
    r = rank_of(c)
    pen = 0.02 * r + 2.0 * _gift_value(c)
    if r in POINT_RANKS:
        pen += POINT_PASS * (2.0 if r != 5 else 1.0)
    if (1 << c) & bomb_cards:
        pen += 2.0
    return pen


__all__ = ["HeuristicBot"]
