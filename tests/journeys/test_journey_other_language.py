"""Journey: a bot in another language, from ``docs/protocol.md`` alone (issue 23, finding 8).

The document's last section must say how the arena starts a bot, with the variables the
arena really sets, and its transcript must be messages of the real protocol. The Node bot
(``example_bots/node``, written from the document; ``tests/example_bots/test_node.py`` plays
it where Node.js is installed) is the proof that it is enough.
"""

from __future__ import annotations

import re

from google.protobuf import text_format

from arena.server import bots, sandbox
from arena.wire import pb
from tests.helpers import ROOT

PROTOCOL = ROOT / "docs" / "protocol.md"


def section() -> str:
    text = PROTOCOL.read_text(encoding="utf-8")
    return text[text.index("## 15. A bot in another language") :]


def test_the_document_names_every_variable_the_arena_sets() -> None:
    documented = set(re.findall(r"^\| `(TICHU_ARENA_\w+)` \|", section(), re.M))
    assert documented == {"TICHU_ARENA_SERVER", bots.ENV_TOKEN, bots.ENV_NAME, bots.ENV_SEED}
    assert f"unix:{sandbox.SANDBOX_SOCKET}" in section()
    node = (ROOT / "example_bots" / "node" / "README.md").read_text(encoding="utf-8")
    assert "A bot in another language" in node


def test_the_transcript_is_real_protocol_messages() -> None:
    block = section().split("```\n")[-2]
    parsed = 0
    for line in block.splitlines():
        if "..." in line:
            continue  # cut short or elided
        arrow, _, body = line.partition(" ")
        if arrow == "bot":
            text_format.Parse(body.removeprefix("-> "), pb.BotMessage())
        else:
            text_format.Parse(body.removeprefix("referee "), pb.RefereeMessage())
        parsed += 1
    assert parsed >= 7
