"""Learning environments over the rules core (extra ``tichu-arena[env]``).

``from arena.env import tichu_v0; env = tichu_v0.env()`` is a PettingZoo AEC environment of
one hand (or a match to a target); ``arena.env.encoding`` holds its action and observation
encodings and needs only numpy, so a bot process can decode a policy without PettingZoo.
Importing this package imports neither (docs/learning.md).
"""
