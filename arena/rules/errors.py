"""The rules core's error types: malformed input versus a move the rules forbid now."""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error the arena raises on purpose."""


class InvalidActionError(ArenaError, ValueError):
    """Raised when input cannot be read as an action or a card at all (bad syntax, bad id)."""


class IllegalActionError(ArenaError, ValueError):
    """Raised when a well-formed action is against the rules in the current state.

    ``where`` names the state (hand, trick, seat, phase) and ``rule`` the rule broken,
    so a replay checker or a referee can report both.
    """

    def __init__(self, rule: str, where: str) -> None:
        super().__init__(f"{rule} ({where})")
        self.rule = rule
        self.where = where
