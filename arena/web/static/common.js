/* Shared by every page: the query string, JSON fetches, cards and the table view. */
"use strict";
const Q = new URLSearchParams(location.search);
const DB = Q.get("db") || "0";

function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") p.set(k, v);
  return p.toString();
}
async function getJSON(path, params) {
  const r = await fetch(path + "?" + qs(params));
  const body = await r.json();
  if (!r.ok) throw new Error(body.detail ? JSON.stringify(body.detail) : r.statusText);
  return body;
}
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const kid of kids) if (kid !== null && kid !== undefined)
    e.append(typeof kid === "string" || typeof kid === "number" ? String(kid) : kid);
  return e;
}
function showError(where, err) {
  where.replaceChildren(el("p", {class: "error", text: String(err.message || err)}));
}
function topBar(event) {
  const bar = document.querySelector("header.top");
  const base = {db: DB, event: event};
  // replaceChildren writes a null as the text "null": leave the event's links out instead.
  bar.replaceChildren(
    el("strong", {}, el("a", {href: "/?" + qs({db: DB})}, "Tichu Arena")),
    ...(event ? [el("a", {href: "/event?" + qs(base)}, "event " + event),
                 el("a", {href: "/games?" + qs(base)}, "games")] : []));
}
function cardEl(name) {
  const suit = name.length === 2 && "jspt".includes(name[1]) && name[0] !== "D" && name[0] !== "P" && name[0] !== "M" ? name[1] : "x";
  return el("span", {class: "card " + suit, "data-card": name}, name);
}
function cardsEl(names) { return el("span", {class: "cards"}, ...names.map(cardEl)); }
function playCards(play) {
  // "Ts Js Ph=Q": the Phoenix shows its reading.
  return play.split(" ").map(t => t.startsWith("Ph=") ? "Ph" : t);
}
function pct(x) { return x === null || x === undefined ? "–" : (100 * x).toFixed(1) + " %"; }
function num(x, d) { return x === null || x === undefined ? "–" : Number(x).toFixed(d); }

/* The table: four seats around the trick, the status line. One renderer for replays and live. */
function renderTable(root, v) {
  const seats = v.seats.map((s, i) => {
    const calls = [];
    if (s.grand) calls.push(el("span", {class: "badge G", text: "Grand Tichu"}));
    if (s.tichu) calls.push(el("span", {class: "badge T", text: "Tichu"}));
    if (s.out) calls.push(el("span", {class: "badge", text: "out #" + s.out}));
    const hand = s.cards === null
      ? el("span", {class: "cards hidden-hand"}, ...Array.from({length: s.count}, () => el("span", {class: "card back", text: "??"})))
      : cardsEl(s.cards);
    const won = "won " + s.won_points + " pts" + (s.won_cards === null ? "" : " (" + s.won_cards + " cards)");
    return el("div", {class: "seat seat-" + i + (v.to_act === i ? " act" : ""), "data-seat": i},
      el("h3", {}, el("span", {class: "team-" + s.team, text: "seat " + i + " · " + s.name}),
        el("span", {class: "muted", text: s.count + " cards"}), ...calls),
      hand, el("div", {class: "muted won", text: won}),
      v.exchange && v.exchange[i] ? el("div", {class: "muted", text: "passed " + v.exchange[i].join(" ")}) : null);
  });
  const trick = v.trick.length
    ? v.trick.map(t => el("div", {class: "play"}, el("span", {class: "muted", text: v.seats[t.seat].name + ": "}), cardsEl(playCards(t.play)), " ", el("span", {class: "muted", text: t.combo.split(" ")[0]})))
    : [el("div", {class: "muted", text: "no cards on the table"})];
  const center = el("div", {class: "center"}, el("div", {class: "muted", text: "hand " + v.hand + ", trick " + v.trick_no + " · " + v.phase.replace("_", " ")}), ...trick);
  root.replaceChildren(el("div", {class: "board"}, ...seats, center));
}
function renderStatus(root, v) {
  root.replaceChildren(
    el("span", {class: "scores", text: "score A " + v.scores[0] + " : " + v.scores[1] + " B"}),
    el("span", {class: "wish", text: "wish: " + (v.wish || "none")}),
    el("span", {class: "last", text: v.last ? v.last.text : "start"}));
}
