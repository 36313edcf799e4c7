/* A league's season: the table per division, rating over rounds per bot, the versions. */
"use strict";
function lineChart(series, rounds) {
  // One line per version: rating after each round, with its interval as a band.
  const W = 640, H = 220, L = 50, R = 620, T = 10, B = 190, ns = "http://www.w3.org/2000/svg";
  const pts = Object.values(series).flat();
  const lo = Math.min(...pts.map(p => p[2] ?? p[1])), hi = Math.max(...pts.map(p => p[3] ?? p[1]));
  const x = r => L + (rounds > 1 ? (r - 1) / (rounds - 1) : 0.5) * (R - L), y = v => B - (v - lo) / ((hi - lo) || 1) * (B - T);
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`); svg.setAttribute("class", "chart");
  const add = (tag, a, text) => { const e = document.createElementNS(ns, tag); for (const k in a) e.setAttribute(k, a[k]); if (text) e.textContent = text; svg.append(e); };
  add("text", {x: 4, y: T + 10}, hi.toFixed(0)); add("text", {x: 4, y: B}, lo.toFixed(0));
  for (let r = 1; r <= rounds; r++) add("text", {x: x(r), y: B + 18, "text-anchor": "middle"}, "r" + r);
  for (const [entry, s] of Object.entries(series)) {
    add("polyline", {class: "bar", fill: "none", points: s.map(p => `${x(p[0])},${y(p[1])}`).join(" ")});
    for (const p of s) add("circle", {cx: x(p[0]), cy: y(p[1]), r: 3.5});
    const last = s[s.length - 1];
    add("text", {x: x(last[0]) + 6, y: y(last[1]) - 6}, entry);
  }
  return svg;
}
(async () => {
  const main = document.getElementById("main");
  topBar(null);
  try {
    const b = await getJSON("/api/league", {db: DB, season: Q.get("season")});
    const out = [el("h1", {text: `League ${b.league.name}, season ${b.season.number}`}),
      el("p", {class: "muted", text: `${b.table.rounds} rounds, ${b.table.hands} hands` + (b.season.closed ? ", closed " + b.season.closed : "")})];
    for (const d of b.table.divisions) {
      out.push(el("h2", {text: b.table.divisions.length > 1 ? "Division " + d.division : "Season table"}));
      if (d.note) out.push(el("p", {class: "note", text: d.note}));
      out.push(el("div", {class: "scroll"}, el("table", {class: "league"},
        el("thead", {}, el("tr", {}, ...["#", "bot (version)", "rating", "95% CI", "pts/hand", "hands", "failures", "move"].map((h, i) => el("th", {class: i === 1 ? "name" : "", text: h})))),
        el("tbody", {}, ...d.rows.map(r => el("tr", {}, el("td", {text: r.rank ?? ""}), el("td", {class: "name", text: r.entry}),
          el("td", {text: num(r.rating, 1)}), el("td", {text: r.ci_low === null ? "–" : `${num(r.ci_low, 0)} … ${num(r.ci_high, 0)}`}),
          el("td", {text: num(r.points_per_hand, 2)}), el("td", {text: r.hands}),
          el("td", {text: Object.entries(r.failures || {}).map(([k, v]) => k + " " + v).join(", ")}), el("td", {text: r.movement ?? ""})))))));
    }
    out.push(el("h2", {text: "Rating over rounds"}));
    for (const [bot, series] of Object.entries(b.charts)) out.push(el("h3", {text: bot}), lineChart(series, b.table.rounds));
    out.push(el("h2", {text: "Versions"}), el("div", {class: "scroll"}, el("table", {},
      el("thead", {}, el("tr", {}, ...["entry", "owner", "submitted", "hash", "predecessor"].map(h => el("th", {class: "name", text: h})))),
      el("tbody", {}, ...b.versions.map(v => el("tr", {}, ...[v.entry, v.owner || "", v.submitted, v.hash.slice(0, 12), v.predecessor || ""].map(t => el("td", {class: "name", text: t}))))))));
    main.replaceChildren(...out);
  } catch (err) { showError(main, err); }
})();
