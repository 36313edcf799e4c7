"""League leaderboards: JSON, Markdown and one HTML page, regenerated from the database only.

``league_board`` gathers a season's table (the frozen one for a closed season), every
version's hash, owner and gate verdict, and each bot's rating after every round of the season;
the renderers turn that data into files. The only timestamps are the league's and the
versions' own, so the same database gives byte-identical files. The HTML page is
self-contained (inline CSS and one SVG chart per bot, no scripts, no network).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from arena.tournament.leaderboard_render import rating_text, seed_text, write_files
from arena.tournament.league.season import season_table, table_json
from arena.tournament.league.store import LeagueStore

__all__ = [
    "FORMAT",
    "VERSION",
    "league_board",
    "render_html",
    "render_json",
    "render_markdown",
    "write_league",
]

FORMAT = "tichu-arena-league"
VERSION = 1


def league_board(
    store: LeagueStore, season: int | None = None, *, finished_only: bool = False
) -> dict[str, Any]:
    """Returns a season's leaderboard data (format ``tichu-arena-league`` version 1);
    ``finished_only``: of its finished rounds alone (a round in progress counts nothing)."""
    spec = store.league()
    seasons = {s.number: s for s in store.seasons()}
    number = season if season is not None else max(seasons)
    info = seasons[number]
    rounds = [r for r in store.rounds(number) if r.finished or not finished_only]
    upto = (rounds[-1].number if rounds else 0) if finished_only else None
    table = info.final_table or table_json(season_table(store, number, upto))
    charts: dict[str, dict[str, list[list[float | int | None]]]] = {}
    for round_ in rounds:
        after = table_json(season_table(store, number, round_.number, movement=False))
        for division in after["divisions"]:
            for row in division["rows"]:
                if row["rating"] is not None:
                    series = charts.setdefault(row["bot"], {}).setdefault(row["entry"], [])
                    series.append([round_.number, row["rating"], row["ci_low"], row["ci_high"]])
    entries = {v.id: v.entry for v in store.versions()}
    versions = [
        {
            "entry": v.entry,
            "bot": v.bot,
            "version": v.number,
            "hash": v.hash,
            "owner": v.owner,
            "submitted": v.submitted,
            "predecessor": None if v.predecessor is None else entries[v.predecessor],
            "gate": None
            if v.gate is None
            else {"verdict": v.gate.get("verdict"), "llr": v.gate.get("llr")},
        }
        for v in store.versions()
    ]
    return {
        "format": FORMAT,
        "version": VERSION,
        "league": {
            "name": spec.name,
            "created": store.created(),
            "season_rounds": spec.season_rounds,
            "divisions": None if spec.divisions is None else spec.divisions.model_dump(),
            "carry_sd": spec.carry_sd,
            "deals": seed_text(spec.seed),
        },
        "season": {
            "number": number,
            "started": info.started,
            "closed": info.closed,
            "seasons": sorted(seasons),
        },
        "table": table,
        "charts": charts,
        "versions": versions,
    }


def render_json(board: dict[str, Any]) -> str:
    """The leaderboard as JSON text (sorted keys, two-space indent)."""
    return json.dumps(board, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _rating(row: dict[str, Any]) -> str:
    if row["rating"] is None:
        return "–"
    return rating_text(row["rating"], row["ci_low"], row["ci_high"])


def _move(value: int | None) -> str:
    return "new" if value is None else "=" if value == 0 else f"{value:+d}"


def _failures(row: dict[str, Any]) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in row["failures"].items()) or "–"


def _title(board: dict[str, Any]) -> str:
    season = board["season"]
    state = f"closed {season['closed']}" if season["closed"] else "open"
    table = board["table"]
    return (
        f"{board['league']['name']}: season {season['number']} ({state}), "
        f"{table['rounds']} of {board['league']['season_rounds']} rounds, {table['hands']} hands"
        f" ({board['league'].get('deals', 'secret deals')})"
    )


_COLUMNS = (
    "#",
    "bot (version)",
    "status",
    "hand-Elo [95 %]",
    "pts/hand",
    "hands",
    "failures",
    "move",
)


def _cells(row: dict[str, Any]) -> list[str]:
    return [
        str(row["rank"]),
        f"{row['bot']} (v{row['version']})",
        row["status"],
        _rating(row),
        "–" if row["points_per_hand"] is None else f"{row['points_per_hand']:+.2f}",
        str(row["hands"]),
        _failures(row),
        _move(row["movement"]),
    ]


def render_markdown(board: dict[str, Any]) -> str:
    """The leaderboard as Markdown: the season table per division, then every version."""
    lines = [f"# {_title(board)}", ""]
    lines.append(
        "Ratings: one hand-Elo fit over every hand of the season (mean 0), combined with the "
        "rating carried from the last season where there is one; 95 % intervals. "
        "pts/hand: the bot's team score minus the opponents' per hand. move: ranks gained "
        "since the previous round."
    )
    for division in board["table"]["divisions"]:
        lines.append("")
        if len(board["table"]["divisions"]) > 1:
            lines += [f"## Division {division['division']}", ""]
        lines.append("| " + " | ".join(_COLUMNS) + " |")
        lines.append("|" + "---|" * len(_COLUMNS))
        for row in division["rows"]:
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in _cells(row)) + " |")
        if division["note"]:
            lines += ["", f"Ratings: {division['note']}"]
    lines += [
        "",
        "## Versions",
        "",
        "| version | hash | owner | submitted | after | gate |",
        "|---|---|---|---|---|---|",
    ]
    for v in board["versions"]:
        gate = "–" if v["gate"] is None else str(v["gate"]["verdict"])
        lines.append(
            f"| {v['entry']} | `{v['hash'][:16]}` | {v['owner'] or '–'} | {v['submitted']} | "
            f"{v['predecessor'] or '–'} | {gate} |"
        )
    return "\n".join(lines) + "\n"


def _h(value: object) -> str:
    return html.escape(str(value), quote=True)


_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def chart_svg(bot: str, series: dict[str, list[list[Any]]], rounds: int) -> str:
    """One bot's rating after every round as an inline SVG: a line per version, 95 % bars."""
    width, height, pad = 320, 160, 34
    points = [p for values in series.values() for p in values]
    low = float(min(p[2] for p in points))
    high = float(max(p[3] for p in points))
    if high - low < 1.0:
        low, high = low - 1.0, high + 1.0
    span_x = max(rounds - 1, 1)

    def x(r: int) -> float:
        return pad + (width - 2 * pad) * (r - 1) / span_x

    def y(v: float) -> float:
        return height - pad + (2 * pad - height) * (v - low) / (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{_h(bot)}: rating per round">',
        f"<title>{_h(bot)}: hand-Elo after each round</title>",
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
        'stroke="#999"/>',
        f'<text x="4" y="{pad - 8}" font-size="10">{high:+.0f}</text>',
        f'<text x="4" y="{height - pad + 4}" font-size="10">{low:+.0f}</text>',
    ]
    for r in range(1, rounds + 1):
        parts.append(
            f'<text x="{x(r):.1f}" y="{height - pad + 14}" font-size="10" '
            f'text-anchor="middle">R{r}</text>'
        )
    for k, (entry, values) in enumerate(sorted(series.items())):
        colour = _PALETTE[k % len(_PALETTE)]
        for r, _, lo, hi in values:
            parts.append(
                f'<line x1="{x(r):.1f}" y1="{y(lo):.1f}" x2="{x(r):.1f}" y2="{y(hi):.1f}" '
                f'stroke="{colour}" stroke-opacity="0.35" stroke-width="4"/>'
            )
        path = " ".join(f"{x(r):.1f},{y(v):.1f}" for r, v, _, _ in values)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for r, v, _, _ in values:
            parts.append(f'<circle cx="{x(r):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>')
        parts.append(
            f'<text x="{width - pad + 2}" y="{pad + 12 * k}" font-size="10" '
            f'fill="{colour}">{_h(entry.rsplit(" ", 1)[-1])}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def render_html(board: dict[str, Any]) -> str:
    """The leaderboard as one self-contained HTML page."""
    title = _title(board)
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_h(title)}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:72em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{padding:.25em .6em;"
        "border-bottom:1px solid #ddd;text-align:right}td:nth-child(2),th:nth-child(2)"
        "{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:1em}"
        "figure{margin:0}code{font-size:.9em}</style>",
        f"</head><body><h1>{_h(title)}</h1>",
    ]
    for division in board["table"]["divisions"]:
        if len(board["table"]["divisions"]) > 1:
            out.append(f"<h2>Division {division['division']}</h2>")
        out.append("<table><thead><tr>" + "".join(f"<th>{_h(c)}</th>" for c in _COLUMNS))
        out.append("</tr></thead><tbody>")
        for row in division["rows"]:
            out.append("<tr>" + "".join(f"<td>{_h(c)}</td>" for c in _cells(row)) + "</tr>")
        out.append("</tbody></table>")
        if division["note"]:
            out.append(f"<p>Ratings: {_h(division['note'])}</p>")
    rounds = board["table"]["rounds"]
    if board["charts"]:
        out.append('<h2>Rating per round</h2><div class="charts">')
        for bot, series in sorted(board["charts"].items()):
            out.append(
                f"<figure>{chart_svg(bot, series, rounds)}<figcaption>{_h(bot)}</figcaption>"
                "</figure>"
            )
        out.append("</div>")
    out.append(
        "<h2>Versions</h2><table><thead><tr><th>version</th><th>hash</th><th>owner</th>"
        "<th>submitted</th><th>after</th><th>gate</th></tr></thead><tbody>"
    )
    for v in board["versions"]:
        gate = "–" if v["gate"] is None else v["gate"]["verdict"]
        out.append(
            f"<tr><td>{_h(v['entry'])}</td><td><code>{_h(v['hash'][:16])}</code></td>"
            f"<td>{_h(v['owner'] or '–')}</td><td>{_h(v['submitted'])}</td>"
            f"<td>{_h(v['predecessor'] or '–')}</td><td>{_h(gate)}</td></tr>"
        )
    out.append("</tbody></table></body></html>")
    return "\n".join(out) + "\n"


def write_league(board: dict[str, Any], out_dir: Path | str, name: str | None = None) -> list[Path]:
    """Writes ``<name>.md``, ``.json`` and ``.html`` (name: the league's) into ``out_dir``."""
    return write_files(
        out_dir,
        name or board["league"]["name"],
        [
            (".md", render_markdown(board)),
            (".json", render_json(board)),
            (".html", render_html(board)),
        ],
    )
