"""``arena bench``: performance figures, printed; never part of the test suite."""

from __future__ import annotations

from typing import Annotated

import typer

from arena.bench import bench_engine

app = typer.Typer(help="Measure performance and print the figures.", no_args_is_help=True)


@app.command()
def engine(
    matches: Annotated[int, typer.Option(help="Random matches to 1000 to play.")] = 100,
    hands: Annotated[int, typer.Option(help="Random 14-card hands for play generation.")] = 20_000,
    seed: Annotated[int, typer.Option(help="Seed for deals and choices.")] = 1,
) -> None:
    """Random self-play and play-generation speed of the rules core on one core."""
    f = bench_engine(matches, hands, seed)
    print(f"random self-play : {f.matches} matches, {f.hands} hands in {f.seconds:.2f} s")
    print(f"  hands/s        : {f.hands_per_second:,.0f}")
    print(f"  decisions/hand : {f.decisions_per_hand:.1f}")
    print(f"  legal actions  : {f.legal_us:.2f} us per generation ({f.legal_calls:,} calls)")
    print(f"play generation  : {f.gen_hands:,} random 14-card hands in {f.gen_seconds:.2f} s")
    print(f"  hands/s        : {f.gen_hands_per_second:,.0f}")
    print(f"  plays/hand     : {f.gen_plays / f.gen_hands:.1f}")
