/* The event page: leaderboard and chart, crosstable, failures, statistics, live tables. */
"use strict";
const EVENT = Q.get("event");

function table(head, rows, cls) {
  return el("div", {class: "scroll"}, el("table", {class: cls || ""},
    el("thead", {}, el("tr", {}, ...head.map((h, i) => el("th", {class: i === 0 ? "name" : "", text: h})))),
    el("tbody", {}, ...rows.map(r => el("tr", {}, ...r.map((c, i) => el("td", {class: i === 0 ? "name" : ""}, c)))))));
}
function chart(ratings) {
  const W = 760, L = 150, R = 610, H = 26, top = 8;
  const lo = Math.min(0, ...ratings.map(r => r.low)), hi = Math.max(0, ...ratings.map(r => r.high));
  const span = (hi - lo) || 1, x = v => L + (v - lo) / span * (R - L);
  const bottom = top + H * ratings.length, ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${bottom + 24}`); svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "hand-Elo with confidence intervals");
  const add = (tag, a, text) => { const e = document.createElementNS(ns, tag); for (const k in a) e.setAttribute(k, a[k]); if (text) e.textContent = text; svg.append(e); };
  add("line", {class: "zero", x1: x(0), x2: x(0), y1: top, y2: bottom});
  add("text", {x: x(lo), y: bottom + 16, "text-anchor": "start"}, lo.toFixed(0));
  add("text", {x: x(hi), y: bottom + 16, "text-anchor": "end"}, hi.toFixed(0));
  ratings.forEach((r, i) => {
    const y = top + H * i + H / 2;
    add("text", {x: L - 8, y: y + 4, "text-anchor": "end"}, r.bot);
    add("line", {class: "bar", x1: x(r.low), x2: x(r.high), y1: y, y2: y});
    add("circle", {cx: x(r.rating), cy: y, r: 4.5});
    add("text", {x: R + 10, y: y + 4}, `${r.rating >= 0 ? "+" : ""}${r.rating.toFixed(1)} [${r.low.toFixed(0)}, ${r.high.toFixed(0)}]`);
  });
  return svg;
}
async function load() {
  const main = document.getElementById("main");
  try {
    const d = await getJSON("/api/event", {db: DB, event: EVENT});
    topBar(d.event);
    const lb = d.leaderboard, p = d.progress;
    const out = [el("h1", {}, "Event " + d.event + " ",
      p.status === "running" ? el("span", {class: "badge live", text: "live"}) : el("span", {class: "badge", text: p.status})),
      el("p", {class: "muted", id: "progress", text: `${p.plays_done} of ${p.plays_total} plays, ${p.hands} hands`})];
    if (d.running.length) {
      out.push(el("h2", {text: "Live tables"}), el("p", {}, ...d.running.map(o =>
        el("a", {class: "badge live", href: "/live?" + qs({db: DB, event: d.event, play: o}), style: "margin-right:.4rem"}, "play " + o))));
    }
    const ratings = lb.ratings.rows.map(r => ({...r, low: r.ci_low, high: r.ci_high, margin: r.margin_per_hand}));
    out.push(el("h2", {text: "Leaderboard"}));
    if (ratings.length) {
      out.push(chart(ratings), table(["bot", "hand-Elo", "CI", "LOS next", "pts/hand", "hands"],
        ratings.map(r => [r.bot, num(r.rating, 1), `${num(r.low, 0)} … ${num(r.high, 0)}`, pct(r.los_next), num(r.margin, 2), r.hands]), "leaderboard"));
    } else out.push(el("p", {class: "muted", text: "No ratings yet: " + (lb.ratings.note || "no hands")}));
    const ct = d.crosstable;
    const cell = c => c ? `${c.margin >= 0 ? "+" : ""}${c.margin.toFixed(1)} (${c.hands})` : "–";
    out.push(el("h2", {text: "Crosstable: partnerships"}),
      el("p", {class: "note", text: "Row bot partnered with the column bot: points per hand of their team (hands)."}),
      table(["bot", ...ct.bots], ct.bots.map((b, i) => [b, ...ct.partner[i].map(cell)]), "crosstable"),
      el("h2", {text: "Crosstable: opponents"}),
      el("p", {class: "note", text: "Row bot against the column bot: points per hand of the row bot's team (hands)."}),
      table(["bot", ...ct.bots], ct.bots.map((b, i) => [b, ...ct.against[i].map(cell)]), "against"));
    const kinds = [...new Set(d.stats.flatMap(s => Object.keys(s.failures)))].sort();
    if (d.boards_in_play) out.push(el("p", {class: "note boards-in-play", text: `Failures and statistics count finished boards only (${d.boards_in_play} in play): a board's other tables hold the same cards.`}));
    out.push(el("h2", {text: "Failures per bot"}),
      kinds.length ? table(["bot", ...kinds, "total"], d.stats.map(s => [s.bot, ...kinds.map(k => s.failures[k] || 0), Object.values(s.failures).reduce((a, b) => a + b, 0)]), "failures")
        : el("p", {class: "muted failures-none", text: "No failures recorded."}));
    out.push(el("h2", {text: "Statistics per bot"}));
    if (d.replays_unreadable) out.push(el("p", {class: "note replays-unreadable", text: `${d.replays_unreadable} replay file(s) could not be read: bombs, wishes and think times count only the others.`}));
    out.push(table(
      ["bot", "hands", "Tichu calls", "Tichu made", "Grand calls", "Grand made", "double victories", "bombs", "wishes", "think mean ms", "think p99 ms"],
      d.stats.map(s => [s.bot, s.hands, `${s.tichu_calls} (${pct(s.tichu_rate)})`, pct(s.tichu_success), `${s.grand_calls} (${pct(s.grand_rate)})`, pct(s.grand_success),
        s.double_victories, s.bombs, s.wishes, num(s.think_mean_ms, 2), num(s.think_p99_ms, 2)]), "stats"));
    main.replaceChildren(...out);
    return p;
  } catch (err) { showError(main, err); return null; }
}
(async () => {
  const p = await load();
  if (!p || p.status === "finished" || p.status === "interrupted") return;
  // Live: reload the figures whenever a play is recorded; the server ends the stream when done.
  const es = new EventSource("/api/event/stream?" + qs({db: DB, event: EVENT}));
  let last = p.plays_done;
  es.addEventListener("progress", e => { const q = JSON.parse(e.data); if (q.plays_done !== last) { last = q.plays_done; load(); } });
  es.addEventListener("end", () => { es.close(); load(); });
})();
