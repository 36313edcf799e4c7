"""The ``arena`` command: one Typer app per group, joined here."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from arena import replay as replays
from arena.bench import random_answer
from arena.cli import bench, replay
from arena.rules import Match, Options

app = typer.Typer(
    help="Tichu Arena: referee, events and tools for Tichu bots.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(replay.app, name="replay")
app.add_typer(bench.app, name="bench")
console = Console()


@app.command()
def demo(
    seed: Annotated[int, typer.Option(help="Match seed.")] = 2026,
    out: Annotated[Path, typer.Option(help="Where to write the replay.")] = Path(
        "runs/demo/replay.json"
    ),
) -> None:
    """Play one seeded match between four random bots in-process and print the scores."""
    rng = random.Random(seed)
    m = Match(Options(), seed=seed)
    while not m.over:
        m.apply(random_answer(m, rng))
    names = ["random-0", "random-1", "random-2", "random-3"]
    table = Table(title=f"demo match, seed {seed}: team A = seats 0+2, team B = seats 1+3")
    for col in ("hand", "first out", "team A", "team B", "total A", "total B"):
        table.add_column(col, justify="right")
    ta = tb = 0
    for r in m.hand_results:
        ta += r.score[0]
        tb += r.score[1]
        first = names[r.out[0]] + (" (1-2)" if r.double_victory >= 0 else "")
        table.add_row(
            str(r.hand + 1), first, f"{r.score[0]:+d}", f"{r.score[1]:+d}", str(ta), str(tb)
        )
    console.print(table)
    winner = "A" if m.scores[0] > m.scores[1] else "B"
    console.print(f"team {winner} wins {m.scores[0]} : {m.scores[1]}", highlight=False)
    replays.save(replays.from_match(m, names), out)
    console.print(f"replay written to {out} (try: arena replay verify {out})", highlight=False)


if __name__ == "__main__":  # pragma: no cover
    app()
