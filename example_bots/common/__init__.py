"""Helpers shared by the reference bots (and open to any bot): imports only ``arena.rules``,
``sdk`` and the standard library.

* ``ranks``: rank profiles of card masks, bomb finding, static combination strengths.
* ``partition``: the cheapest split of a hand into combinations (``plan``, ``hand_cost``,
  ``realize``), memoised on rank profiles.
* ``odds``: card counting, the chance that an opponent can beat a play (``Odds``).
* ``strength``: controls against losers, the numbers behind Tichu and Grand Tichu calls.
* ``table``: small readings of an ``Observation`` (partner, trick owner, live bets).
* ``duel``: in-process duplicate boards between two bot types, for strength tests.
"""
