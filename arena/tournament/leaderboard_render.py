"""Leaderboard files: JSON, Markdown and one HTML page, rendered from a built ``Leaderboard``.

The renderers are deterministic: the same database gives byte-identical files. Numbers were
rounded once, when the leaderboard was built, and the only timestamp is the event's own
creation time. The HTML page is self-contained (inline CSS and SVG, no scripts, no network).
Leaderboard files are never edited by hand: ``arena leaderboard`` rewrites them.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from arena.tournament.leaderboard import FORMAT, VERSION, Leaderboard

_SCHEDULE_NAMES = {
    "round_robin": "round robin",
    "gauntlet": "gauntlet",
    "fixed": "fixed partnerships",
    "turnier": "turnier",
}


__all__ = [
    "render_html",
    "render_json",
    "render_markdown",
    "seed_text",
    "to_json",
    "write_files",
    "write_leaderboard",
]


# ---------------------------------------------------------------------------------------------
# JSON


def to_json(board: Leaderboard) -> dict[str, Any]:
    """Returns the leaderboard as JSON-ready data (format ``tichu-arena-leaderboard`` v1)."""
    duplicate: dict[str, Any] | None = None
    if board.duplicate is not None:
        d = board.duplicate
        duplicate = {
            "pairs": d.pairs,
            "correlation": d.correlation,
            "effective_sample_multiplier": _finite(d.effective_sample_multiplier),
            "margin_sd": d.margin_sd,
            "pair_margin_variance": d.pair_margin_variance,
            "pair_score_variance": d.pair_score_variance,
            "independent_pair_score_variance": d.independent_pair_score_variance,
        }
    return {
        "format": FORMAT,
        "version": VERSION,
        "event": {
            "name": board.event,
            "status": board.status,
            "created": board.created,
            "schedule": board.schedule,
            "method": board.method,
            "format": board.format,
            "rotations": board.rotations,
            "hands_per_board": board.hands_per_board,
            "seed": board.seed,
            "bots": list(board.bots),
        },
        "progress": {
            "plays_done": board.plays_done,
            "plays_total": board.plays_total,
            "boards_done": board.boards_done,
            "boards_total": board.boards_total,
            "hands": board.hands,
        },
        "ratings": {
            "unit": "hand-Elo",
            "anchor": board.anchor,
            "confidence": board.level,
            "note": board.ratings_note,
            "residual_sd": board.residual_sd,
            "rows": [
                {
                    "rank": r.rank,
                    "bot": r.bot,
                    "rating": r.rating,
                    "stderr": r.stderr,
                    "ci_low": r.low,
                    "ci_high": r.high,
                    "los_next": r.los_next,
                    "margin_per_hand": r.margin,
                    "margin_stderr": r.margin_stderr,
                    "hands": r.hands,
                }
                for r in board.ratings
            ],
        },
        "duplicate": duplicate,
        "duplicate_note": board.duplicate_note,
        "standings": [
            {
                "rank": rank,
                "bot": s.bot,
                "victory_points": s.victory_points,
                "tichu_points": s.tichu_points,
                "hands": s.hands,
            }
            for rank, s in enumerate(board.standings, 1)
        ],
        "teams": [
            {
                "players": list(t.players),
                "hands": t.hands,
                "won": t.won,
                "tied": t.tied,
                "lost": t.lost,
                "margin_per_hand": t.margin,
                "margin_ci95": t.margin_ci,
            }
            for t in board.teams
        ],
        "failures": [
            {
                "bot": f.bot,
                "total": f.total,
                "hands": f.hands,
                "kinds": dict(f.kinds),
                "log": f.log or None,
            }
            for f in board.failures
        ],
    }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def render_json(board: Leaderboard) -> str:
    """Returns the JSON file's text."""
    return json.dumps(to_json(board), indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------------------
# Markdown


def _describe_event(board: Leaderboard) -> str:
    schedule = _SCHEDULE_NAMES.get(board.schedule, board.schedule)
    method = f" ({board.method.replace('_', ' ')})" if board.method else ""
    if board.format == "board":
        per = "1 hand" if board.hands_per_board == 1 else f"{board.hands_per_board} hands"
        play = f"boards of {per}"
    else:
        play = "games"
    return (
        f"{schedule}{method}, {len(board.bots)} bots, {play}, {board.rotations} rotations, "
        f"{seed_text(board.seed)}; created {board.created}; {board.status}"
    )


def seed_text(seed: int | None) -> str:
    """How an event's deals were drawn: a public seed, or its secret (never shown)."""
    return "secret deals" if seed is None else f"public seed {seed}"


def _progress(board: Leaderboard) -> str:
    return (
        f"{board.boards_done}/{board.boards_total} boards, "
        f"{board.plays_done}/{board.plays_total} plays, {board.hands} hands"
    )


def _signed(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:+.{digits}f}"


def rating_text(rating: float, low: float, high: float) -> str:
    """A rating with its interval's ends, ``+473.6 [+276, +862]``: profile intervals are not
    symmetric about the rating, so a ``±`` half-width would misstate one end or the other."""
    return f"{rating:+.1f} [{low:+.0f}, {high:+.0f}]"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100.0 * value:.1f}%"


def _md(text: str) -> str:
    for char in "\\`*_|[]<>":
        text = text.replace(char, "\\" + char)
    return text


def _level(board: Leaderboard) -> str:
    return f"{100.0 * board.level:g}%"


def _rating_explainer(board: Leaderboard) -> list[str]:
    anchor = f"{board.anchor} = 0" if board.anchor else "mean 0"
    return [
        f"Hand-Elo ({anchor}): a team's rating is the mean of its two bots, and "
        "P(team wins a hand) = 1/(1 + 10^(−Δ/400)). "
        f"CI: {_level(board)} interval and s.e.: standard error, both robust to the "
        "correlation of a board's plays (docs/ratings.md). "
        "LOS: likelihood of superiority over the next bot down. "
        "pts/hand: points per hand by which two copies of the bot beat two average bots "
        "(± one standard error).",
    ]


def render_markdown(board: Leaderboard) -> str:
    """Returns the Markdown file's text."""
    lines = [
        f"# Leaderboard: {_md(board.event)}",
        "",
        _md(_describe_event(board)) + ".",
        "",
        f"Progress: {_progress(board)}.",
        "",
        "## Ratings",
        "",
    ]
    if board.ratings:
        lines += [
            f"| # | bot | hand-Elo | {_level(board)} CI | s.e. | LOS vs next | pts/hand | hands |",
            "|--:|:--|--:|:--:|--:|--:|--:|--:|",
        ]
        for r in board.ratings:
            margin = "–" if r.margin is None else f"{r.margin:+.2f} ± {r.margin_stderr:.2f}"
            lines.append(
                f"| {r.rank} | {_md(r.bot)} | {r.rating:+.1f} | {r.low:+.1f} … {r.high:+.1f} "
                f"| {r.stderr:.1f} | {_percent(r.los_next)} | {margin} "
                f"| {r.hands} |"
            )
        lines += ["", *_rating_explainer(board), ""]
    else:
        lines += [f"No ratings: {_md(board.ratings_note or 'no hands')}.", ""]
    lines += ["## Duplicate boards", ""]
    lines += [_duplicate_text(board), ""]
    if board.standings:
        lines += [
            "## Victory points",
            "",
            "| # | bot | VP | Tichu points | hands |",
            "|--:|:--|--:|--:|--:|",
        ]
        for rank, s in enumerate(board.standings, 1):
            lines.append(
                f"| {rank} | {_md(s.bot)} | {s.victory_points} | {s.tichu_points} | {s.hands} |"
            )
        lines += ["", "Per hand: win 2, tie 1, double victory 3 (2 with a failed own bet).", ""]
    if board.teams:
        lines += [
            "## Partnerships",
            "",
            "| team | hands | won | tied | lost | pts/hand ± 95% |",
            "|:--|--:|--:|--:|--:|--:|",
        ]
        for t in board.teams:
            lines.append(
                f"| {_md(' & '.join(t.players))} | {t.hands} | {t.won} | {t.tied} | {t.lost} "
                f"| {t.margin:+.2f} ± {t.margin_ci:.2f} |"
            )
        lines.append("")
    lines += ["## Bot failures", ""]
    if board.failures:
        lines += ["| bot | failures | by kind | hands | log |", "|:--|--:|:--|--:|:--|"]
        for f in board.failures:
            log = f"`{f.log}`" if f.log else "–"
            lines.append(f"| {_md(f.bot)} | {f.total} | {_md(f.describe())} | {f.hands} | {log} |")
        lines += ["", _FAILURES_NOTE, ""]
    else:
        lines += ["None recorded.", ""]
    lines += ["---", "", "Regenerated by `arena leaderboard` from the event database; do not edit."]
    return "\n".join(lines) + "\n"


_FAILURES_NOTE = (
    "Recorded by the referee (timeout, malformed, illegal, disconnect, crash) or reported by "
    "the bot's client when it answered for the bot (late, exception, bad answer). The log is "
    "the bot's first failing play's."
)


def _duplicate_text(board: Leaderboard) -> str:
    d = board.duplicate
    if d is None:
        return f"Not measured yet: {board.duplicate_note}."
    multiplier = _finite(d.effective_sample_multiplier)
    worth = "∞" if multiplier is None else f"{multiplier:.2f}"
    return (
        f"ρ̂ = corr(d⁽⁰⁾, d⁽¹⁾) = {d.correlation:+.3f} over {d.pairs} duplicate pairs: "
        f"one duplicate hand is worth {worth} independent hands (1/(1 + ρ̂)). "
        f"Margin s.d. per hand {d.margin_sd:.1f} points; Var(d⁽⁰⁾ + d⁽¹⁾) = "
        f"{d.pair_margin_variance:.0f} against {2 * d.margin_sd**2:.0f} for independent deals."
    )


# ---------------------------------------------------------------------------------------------
# HTML

_CSS = """
:root { color-scheme: light dark; --fg: #1d232b; --muted: #5d6874; --line: #d5dbe1;
  --bar: #2f6db5; --zero: #8a949e; --bg: #ffffff; --row: #f4f6f8; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e8ec; --muted: #9aa5b1;
  --line: #3a4350; --bar: #6aa5ee; --zero: #7d8893; --bg: #14181d; --row: #1c2127; } }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .3rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .6rem; border-bottom: 1px solid var(--line); }
p.meta, p.note, footer { color: var(--muted); }
p.note { font-size: .85rem; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: .3rem .6rem; text-align: right; border-bottom: 1px solid var(--line); }
th.name, td.name { text-align: left; }
tbody tr:nth-child(even) { background: var(--row); }
svg { display: block; width: 100%; height: auto; margin: .5rem 0 1rem; }
svg text { fill: var(--fg); font-size: 12px; }
svg .axis text { fill: var(--muted); font-size: 11px; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg .zero { stroke: var(--zero); stroke-width: 1.5; }
svg .errorbar line { stroke: var(--bar); stroke-width: 2; }
svg .errorbar circle { fill: var(--bar); }
footer { margin-top: 2.5rem; font-size: .85rem; }
@media (max-width: 640px) {
  body { margin: .5rem; }
  table { display: block; overflow-x: auto; max-width: 100%; }
  th, td { padding: .25rem .4rem; }
}
"""


def _h(text: object) -> str:
    return html.escape(str(text), quote=True)


def render_html(board: Leaderboard) -> str:
    """Returns the self-contained HTML page: tables and an SVG chart with error bars."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Leaderboard: {_h(board.event)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>Leaderboard: {_h(board.event)}</h1>",
        f'<p class="meta">{_h(_describe_event(board))}<br>Progress: {_h(_progress(board))}</p>',
        "<section>",
        "<h2>Ratings</h2>",
    ]
    if board.ratings:
        parts.append(_svg_chart(board))
        parts += [
            "<table>",
            '<thead><tr><th>#</th><th class="name">bot</th><th>hand-Elo</th>'
            f"<th>{_level(board)} CI</th><th>s.e.</th><th>LOS vs next</th><th>pts/hand</th>"
            "<th>hands</th></tr></thead>",
            "<tbody>",
        ]
        for r in board.ratings:
            margin = "–" if r.margin is None else f"{r.margin:+.2f} ± {r.margin_stderr:.2f}"
            parts.append(
                f'<tr><td>{r.rank}</td><td class="name">{_h(r.bot)}</td>'
                f"<td>{r.rating:+.1f}</td><td>{r.low:+.1f} … {r.high:+.1f}</td>"
                f"<td>{r.stderr:.1f}</td><td>{_percent(r.los_next)}</td>"
                f"<td>{_h(margin)}</td><td>{r.hands}</td></tr>"
            )
        parts += ["</tbody>", "</table>"]
        parts += [f'<p class="note">{_h(line)}</p>' for line in _rating_explainer(board)]
    else:
        parts.append(f"<p>No ratings: {_h(board.ratings_note or 'no hands')}.</p>")
    parts += ["</section>", "<section>", "<h2>Duplicate boards</h2>"]
    parts.append(f"<p>{_h(_duplicate_text(board))}</p>")
    parts.append("</section>")
    if board.standings:
        parts += [
            "<section>",
            "<h2>Victory points</h2>",
            "<table>",
            '<thead><tr><th>#</th><th class="name">bot</th><th>VP</th><th>Tichu points</th>'
            "<th>hands</th></tr></thead>",
            "<tbody>",
        ]
        for rank, s in enumerate(board.standings, 1):
            parts.append(
                f'<tr><td>{rank}</td><td class="name">{_h(s.bot)}</td>'
                f"<td>{s.victory_points}</td><td>{s.tichu_points}</td><td>{s.hands}</td></tr>"
            )
        parts += [
            "</tbody>",
            "</table>",
            '<p class="note">Per hand: win 2, tie 1, double victory 3 '
            "(2 with a failed own bet).</p>",
            "</section>",
        ]
    if board.teams:
        parts += [
            "<section>",
            "<h2>Partnerships</h2>",
            "<table>",
            '<thead><tr><th class="name">team</th><th>hands</th><th>won</th><th>tied</th>'
            "<th>lost</th><th>pts/hand ± 95%</th></tr></thead>",
            "<tbody>",
        ]
        for t in board.teams:
            parts.append(
                f'<tr><td class="name">{_h(" & ".join(t.players))}</td><td>{t.hands}</td>'
                f"<td>{t.won}</td><td>{t.tied}</td><td>{t.lost}</td>"
                f"<td>{t.margin:+.2f} ± {t.margin_ci:.2f}</td></tr>"
            )
        parts += ["</tbody>", "</table>", "</section>"]
    parts += ["<section>", "<h2>Bot failures</h2>"]
    if board.failures:
        parts += [
            "<table>",
            '<thead><tr><th class="name">bot</th><th>failures</th><th class="name">by kind</th>'
            '<th>hands</th><th class="name">log</th></tr></thead>',
            "<tbody>",
        ]
        for f in board.failures:
            log = f"<code>{_h(f.log)}</code>" if f.log else "–"
            parts.append(
                f'<tr><td class="name">{_h(f.bot)}</td><td>{f.total}</td>'
                f'<td class="name">{_h(f.describe())}</td><td>{f.hands}</td>'
                f'<td class="name">{log}</td></tr>'
            )
        parts += ["</tbody>", "</table>", f'<p class="note">{_h(_FAILURES_NOTE)}</p>']
    else:
        parts.append("<p>None recorded.</p>")
    parts.append("</section>")
    parts += [
        "<footer>Regenerated by <code>arena leaderboard</code> from the event database; "
        "do not edit. Games, replays and live tables: <code>arena web --db FILE</code>, then "
        f"<code>/event?event={_h(quote(board.event))}</code> in the browser.</footer>",
        "</main>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


_CHART_WIDTH = 760
_LABEL_WIDTH = 170
_VALUE_WIDTH = 150
_ROW_HEIGHT = 26
_TOP = 10
_AXIS_HEIGHT = 34


def _svg_chart(board: Leaderboard) -> str:
    """Draws each bot's rating as a dot with its confidence interval as an error bar."""
    rows = board.ratings
    low = min(0.0, *(r.low for r in rows))
    high = max(0.0, *(r.high for r in rows))
    step = _tick_step(high - low)
    low = math.floor(low / step) * step
    high = math.ceil(high / step) * step
    if high <= low:
        low, high = low - step, high + step
    left = _LABEL_WIDTH
    right = _CHART_WIDTH - _VALUE_WIDTH
    plot_bottom = _TOP + _ROW_HEIGHT * len(rows)
    height = plot_bottom + _AXIS_HEIGHT

    def x(value: float) -> str:
        return f"{left + (value - low) / (high - low) * (right - left):.1f}"

    title = f"Hand-Elo ratings with {_level(board)} confidence intervals"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_CHART_WIDTH} {height}" '
        f'role="img" aria-label="{_h(title)}">',
        f"<title>{_h(title)}</title>",
        '<g class="axis">',
    ]
    ticks = round((high - low) / step)
    for i in range(ticks + 1):
        value = low + i * step
        css = "zero" if abs(value) < 1e-9 else "grid"
        out.append(
            f'<line class="{css}" x1="{x(value)}" x2="{x(value)}" y1="{_TOP}" y2="{plot_bottom}"/>'
        )
        out.append(
            f'<text x="{x(value)}" y="{plot_bottom + 16}" text-anchor="middle">'
            f"{_tick_label(value)}</text>"
        )
    out.append(
        f'<text x="{(left + right) / 2:.1f}" y="{plot_bottom + 31}" text-anchor="middle">'
        f"hand-Elo (dot) and {_level(board)} confidence interval (bar)</text>"
    )
    out.append("</g>")
    for i, r in enumerate(rows):
        y = _TOP + _ROW_HEIGHT * i + _ROW_HEIGHT / 2
        out += [
            f'<g class="errorbar" data-bot="{_h(r.bot)}">',
            f"<title>{_h(r.bot)}: {r.rating:+.1f} ({r.low:+.1f} … {r.high:+.1f})</title>",
            f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end">{_h(r.bot)}</text>',
            f'<line x1="{x(r.low)}" x2="{x(r.high)}" y1="{y:.1f}" y2="{y:.1f}"/>',
            f'<line x1="{x(r.low)}" x2="{x(r.low)}" y1="{y - 6:.1f}" y2="{y + 6:.1f}"/>',
            f'<line x1="{x(r.high)}" x2="{x(r.high)}" y1="{y - 6:.1f}" y2="{y + 6:.1f}"/>',
            f'<circle cx="{x(r.rating)}" cy="{y:.1f}" r="4.5"/>',
            f'<text x="{right + 12}" y="{y + 4:.1f}">{rating_text(r.rating, r.low, r.high)}</text>',
            "</g>",
        ]
    out.append("</svg>")
    return "\n".join(out)


def _tick_step(span: float) -> float:
    """Returns a round tick spacing (1, 2, 2.5 or 5 × 10^k) giving about six ticks."""
    if span <= 0.0:
        return 10.0
    raw = span / 6.0
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= factor * power:
            return factor * power
    return 10.0 * power


def _tick_label(value: float) -> str:
    if abs(value) < 1e-9:
        return "0"
    text = f"{value:+.1f}".removesuffix(".0")
    return text.replace("-", "−")


# ---------------------------------------------------------------------------------------------
# Files


def write_leaderboard(board: Leaderboard, out_dir: Path | str) -> tuple[Path, Path, Path]:
    """Writes ``<event>.md``, ``<event>.json`` and ``<event>.html`` into ``out_dir``.

    Each file is written to a temporary name and renamed into place, so a reader never sees
    half a file. Returns the three paths.

    Raises:
        ValueError: The event name cannot be used as a file name.
    """
    if Path(board.event).name != board.event or board.event.startswith("."):
        raise ValueError(f"event name {board.event!r} cannot name a file")
    md, js, page = write_files(
        out_dir,
        board.event,
        (
            (".md", render_markdown(board)),
            (".json", render_json(board)),
            (".html", render_html(board)),
        ),
    )
    return md, js, page


def other_event(board: Leaderboard, out_dir: Path | str) -> str | None:
    """The creation time of another event of the same name whose leaderboard lies in
    ``out_dir`` (and which ``write_leaderboard`` would replace), if there is one.

    Two databases may each hold an event of one name; their leaderboards share a file name.
    """
    try:
        data = json.loads((Path(out_dir) / f"{board.event}.json").read_text(encoding="utf-8"))
        created = data["event"]["created"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return str(created) if created != board.created else None


def write_files(out_dir: Path | str, name: str, texts: Sequence[tuple[str, str]]) -> list[Path]:
    """Writes ``<name><suffix>`` for each (suffix, text) into ``out_dir``; returns the paths.

    Each file is written to a temporary name and renamed into place, so a reader never sees
    half a file.
    """
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for suffix, text in texts:
        path = directory / f"{name}{suffix}"
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        tmp.replace(path)
        paths.append(path)
    return paths
