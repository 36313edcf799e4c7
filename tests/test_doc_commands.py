"""Every command the README and docs/*.md show, checked as written (issue 51).

The journeys run the commands of the paths users take (``tests/test_readme.py`` every README
command, the league, cluster, table and bot-author journeys theirs, from a scratch copy and
another folder). This test covers every other fenced command too, so that none can drift from
the CLI unseen: each ``arena`` command of every ``sh`` block (indented blocks included,
loops and ``&&`` chains taken apart, ``sudo -u USER`` and a ``.venv/bin/`` path stripped) is
parsed by the real ``arena`` command tree, exactly as click would parse it when run: an
unknown command or option, a missing or extra argument, a value of the wrong kind fails. Only a
file that does not exist yet is let pass (an earlier step of the doc makes it). Every other
command is checked by what it names (a ``make`` target of the Makefile, an extra of
pyproject.toml, a script of the repository, the ``dask`` commands the cluster tests start) or
stated as the operating system's with the reason it is not run. An ``arena`` line outside an
``sh`` block fails: a command must be in a block the journeys and this test read.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer._click import exceptions as click  # the click typer carries

from arena.cli.main import app
from tests.helpers import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

SYSTEM = {
    "sudo": "the deployment's system steps (a service user, systemd): docs/deploy.md",
    "systemctl": "systemd, on the organiser's server",
    "journalctl": "systemd's log, on the organiser's server",
    "rsync": "the organiser's backup",
    "cp": "a file copied by the organiser",
    "rm": "a file removed by the organiser",
    "cd": "a folder changed to",
    "export": "a variable set in the user's shell",
    "nice": "a lower priority for a long training run (docs/learning.md; the journey trains)",
    "pytest": "the bot author's own tests (docs/bot-kit.md; the bot author's journey runs them)",
}
"""Commands of the operating system the docs show: not the arena's, not run here."""


def blocks(path: Path) -> Iterator[tuple[str, str]]:
    """(language, text) of every fenced block, indented ones (in a list item) included."""
    text = path.read_text(encoding="utf-8")
    for indent, lang, body in re.findall(r"^([ \t]*)```(\w*)\n(.*?)^\1```", text, re.M | re.S):
        yield lang, "\n".join(line.removeprefix(indent) for line in body.splitlines())


def commands(path: Path) -> list[list[str]]:
    """Every simple command of the file's ``sh`` blocks, as words (compound lines split)."""
    out: list[list[str]] = []
    for lang, body in blocks(path):
        if lang != "sh":
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = re.sub(r"\$\([^)]*\)", "X", line)  # $(date +%F): one word the shell makes
            words = shlex.split(line, comments=True)
            current: list[str] = []
            for word in [*words, ";"]:
                if word in (";", "&&", "||", "|", "do", "done", "then", "fi") or word.endswith(";"):
                    if word.endswith(";") and word != ";":
                        current.append(word[:-1])
                    if current and current[0] not in ("for", "while", "if"):
                        out.append(current)
                    current = []
                else:
                    current.append(word)
    return out


def arena_words(words: list[str]) -> list[str] | None:
    """The arguments after ``arena`` when ``words`` runs the arena (through ``sudo -u USER``
    or a venv path too); None otherwise."""
    if words[:1] == ["sudo"] and words[1:2] == ["-u"]:
        words = words[3:]
    if words and Path(words[0]).name == "arena":
        return words[1:]
    return None


ALL = [(path, words) for path in DOCS for words in commands(path)]


def test_the_docs_show_commands_in_sh_blocks_only() -> None:
    stray = [
        f"{path.name}: {line.strip()}"
        for path in DOCS
        for lang, body in blocks(path)
        if lang != "sh"
        for line in body.splitlines()
        if re.match(r"\s*arena [a-z]", line) and "[" not in line  # a synopsis shows [options]
    ]
    assert stray == []
    assert len(ALL) > 100  # the extraction sees the docs' commands


def _parse(words: list[str]) -> None:
    """Parses ``arena WORDS`` as click would when run, down to the command that runs."""
    command: Any = typer.main.get_command(app)
    ctx = command.make_context("arena", list(words), resilient_parsing=False)
    while hasattr(command, "resolve_command"):  # a group: down to its command
        args = [*ctx._protected_args, *ctx.args]
        if not args:
            return
        name, sub, rest = command.resolve_command(ctx, args)
        assert sub is not None, name
        command = sub
        ctx = sub.make_context(name, rest, parent=ctx, resilient_parsing=False)


@pytest.mark.parametrize(
    ("path", "words"),
    [(p, w) for p, w in ALL if arena_words(w) is not None],
    ids=lambda x: x.name if isinstance(x, Path) else " ".join(x)[:60],
)
def test_every_arena_command_in_the_docs_parses(path: Path, words: list[str]) -> None:
    args = arena_words(words)
    assert args is not None
    args = [a if not a.startswith("$") else "alice" for a in args]  # a loop's variable
    try:
        _parse(args)
    except click.Exit:
        pass  # --help: shown and done
    except click.BadParameter as e:
        if "does not exist" not in e.format_message():  # a file an earlier step makes
            raise AssertionError(f"{path.name}: arena {' '.join(args)}: {e}") from None
    except click.ClickException as e:
        raise AssertionError(f"{path.name}: arena {' '.join(args)}: {e}") from None


def test_every_other_command_in_the_docs_is_known() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    unknown = []
    for path, words in ALL:
        if arena_words(words) is not None:
            continue
        first = words[0]
        if first == "make":
            targets = [w for w in words[1:] if not w.startswith("-") and "/" not in w]
            assert all(re.search(rf"^{t}:", makefile, re.M) for t in targets), words
        elif first == "pip":
            wanted = re.findall(r"\[([a-z,]+)\]", " ".join(words))
            assert wanted and all(x in extras for w in wanted for x in w.split(",")), words
        elif first == "dask":  # as tests/dask_cluster.py and the by-hand test start them
            # the scheduler on a port, each worker its threads: both as the docs start them
            assert (words[1:2] == ["scheduler"] and "--port" in words) or (
                words[1:2] == ["worker"] and "--nthreads" in words
            ), words
        elif first == "python" and words[1:3] == ["-m", "sdk"]:
            assert "--server" in words and "--token" in words, words
        elif first in SYSTEM or (first == "sudo" and arena_words(words) is None):
            scripts = [w for w in words if w.startswith("scripts/") or "/scripts/" in w]
            assert all((ROOT / w[w.index("scripts/") :]).is_file() for w in scripts), words
        else:
            unknown.append(f"{path.name}: {' '.join(words)}")
    assert unknown == []
