"""The bot author's kit: ``arena new-bot`` (``scaffold``) and ``arena check-bot`` (``check``).

``new_bot(parent, name)`` writes a bot folder that plays out of the box; ``check_bot``
starts a bot from its manifest against a real referee and runs the compliance checks
(docs/bot-kit.md).
"""

from arena.kit.check import CheckReport, CheckResult, CheckSettings, check_bot, print_report
from arena.kit.scaffold import ScaffoldError, class_name, new_bot, validate_name

__all__ = [
    "CheckReport",
    "CheckResult",
    "CheckSettings",
    "ScaffoldError",
    "check_bot",
    "class_name",
    "new_bot",
    "print_report",
    "validate_name",
]
