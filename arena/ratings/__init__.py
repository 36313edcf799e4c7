"""Pure rating and statistics library: hand-Elo fits, margins, VP standings and the SPRT gate.

Everything here is a pure function over plain data (no I/O, no clock). The outcome unit is
the hand, one play of one board, scored 1/½/0 for team A (seats 0 and 2) against team B
(seats 1 and 3); ratings are logistic hand-Elo with team rating = mean of the two seats.
"""

from __future__ import annotations

from arena.ratings.bradley_terry import (
    DEFAULT_FIRTH,
    DEFAULT_PRIOR_PRECISION,
    ELO_PER_NAT,
    RatingFit,
    fit_ratings,
)
from arena.ratings.duplicate import (
    DuplicateStats,
    MarginFit,
    duplicate_stats,
    fit_margins,
    margin_to_elo,
)
from arena.ratings.elo import elo_from_score, elo_update, expected_score, sequential_elo
from arena.ratings.hands import (
    HandOutcome,
    RatingError,
    Team,
    board_pairs,
    outcome_of,
    team_weights,
)
from arena.ratings.sprt import (
    DEFAULT_MIN_PAIRS,
    PAIR_SCORES,
    PRIOR_PAIRS,
    EloEstimate,
    Pentanomial,
    SprtResult,
    SprtVerdict,
    clear_answer,
    constrained_mle,
    elo_estimate,
    llr,
    llr_approx,
    llr_approx_array,
    llr_array,
    llr_exact,
    log_wealth,
    log_wealth_array,
    pentanomial_counts,
    pentanomial_index,
    prior_counts,
    sprt,
    sprt_bounds,
    sprt_decision,
)
from arena.ratings.standings import Standing, TurnierHand, victory_points, vp_standings

__all__ = [
    "DEFAULT_FIRTH",
    "DEFAULT_MIN_PAIRS",
    "DEFAULT_PRIOR_PRECISION",
    "ELO_PER_NAT",
    "PAIR_SCORES",
    "PRIOR_PAIRS",
    "DuplicateStats",
    "EloEstimate",
    "HandOutcome",
    "MarginFit",
    "Pentanomial",
    "RatingError",
    "RatingFit",
    "SprtResult",
    "SprtVerdict",
    "Standing",
    "Team",
    "TurnierHand",
    "board_pairs",
    "clear_answer",
    "constrained_mle",
    "duplicate_stats",
    "elo_estimate",
    "elo_from_score",
    "elo_update",
    "expected_score",
    "fit_margins",
    "fit_ratings",
    "llr",
    "llr_approx",
    "llr_approx_array",
    "llr_array",
    "llr_exact",
    "log_wealth",
    "log_wealth_array",
    "margin_to_elo",
    "outcome_of",
    "pentanomial_counts",
    "pentanomial_index",
    "prior_counts",
    "sequential_elo",
    "sprt",
    "sprt_bounds",
    "sprt_decision",
    "team_weights",
    "victory_points",
    "vp_standings",
]
