/* The game list: one row per hand, with filters kept in the address. */
"use strict";
const EVENT = Q.get("event");
const FILTERS = ["bot", "round", "board", "result", "failures"];

(async () => {
  const main = document.getElementById("main");
  const params = {db: DB, event: EVENT};
  for (const f of FILTERS) params[f] = Q.get(f) || "";
  try {
    const d = await getJSON("/api/games", params);
    topBar(d.event);
    const sel = (name, options) => el("label", {}, name,
      el("select", {name: name}, ...options.map(([v, t]) => { const o = el("option", {value: v, text: t}); if (String(params[name]) === String(v)) o.selected = true; return o; })));
    const form = el("form", {class: "filters", method: "get", action: "/games"},
      el("input", {type: "hidden", name: "db", value: DB}), el("input", {type: "hidden", name: "event", value: d.event}),
      sel("bot", [["", "any"], ...d.bots.map(b => [b, b])]),
      sel("round", [["", "any"], ...d.rounds.map(r => [r, r])]),
      el("label", {}, "board", el("input", {name: "board", type: "number", min: 0, value: params.board, style: "width:6em"})),
      sel("result", [["", "any"], ["A", "team A won"], ["B", "team B won"], ["tie", "tie"], ["double", "double victory"]]),
      sel("failures", [["", "any"], ["yes", "with failures"], ["no", "without"]]),
      el("button", {type: "submit", text: "filter"}));
    const seatNames = r => r.seats.map((s, i) => (r.calls[i] !== "-" ? s + " (" + r.calls[i] + ")" : s)).join(" · ");
    const rows = d.rows.map(r => el("tr", {class: r.failures.length ? "fail" : "", "data-play": r.play},
      el("td", {}, r.replay ? el("a", {href: "/replay?" + qs({db: DB, event: d.event, play: r.play})}, "play " + r.play) : "play " + r.play),
      el("td", {class: "score", text: r.score[0] + " : " + r.score[1]}),
      el("td", {text: r.double_victory ? "1-2 " + r.double_victory : ""}),
      el("td", {class: "name", text: seatNames(r)}),
      el("td", {text: r.round}), el("td", {text: r.table}), el("td", {text: r.board}), el("td", {text: r.rotation}), el("td", {text: r.hand}),
      el("td", {class: "name", text: r.failures.map(f => "seat " + f.seat + " " + f.kind).join(", ")})));
    main.replaceChildren(el("h1", {text: "Games of " + d.event}), form,
      el("p", {class: "muted", id: "count", text: d.total + " hands" + (d.total > d.rows.length ? ", first " + d.rows.length + " shown" : "")}),
      el("div", {class: "scroll"}, el("table", {id: "games"},
        el("thead", {}, el("tr", {}, ...["play", "score A : B", "", "seats N · E · S · W", "round", "table", "board", "rot.", "hand", "failures"].map((h, i) => el("th", {class: i === 3 || i === 9 ? "name" : "", text: h})))),
        el("tbody", {}, ...rows))));
  } catch (err) { showError(main, err); }
})();
