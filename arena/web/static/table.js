/* The table component: one renderer for replays, live tables and a person's seat.
 * The viewed seat sits at the bottom, the next seat (who plays after it) on the right,
 * the partner at the top. Cards are drawn as cards; plays carry unambiguous names. */
"use strict";
const SUITS = {j: ["◆", "Jade"], s: ["⚔", "Sword"], p: ["⌂", "Pagoda"], t: ["★", "Star"]};
const SPECIAL = {Dg: ["Dog", "Dog"], Mj: ["1", "Mah Jong"], Dr: ["Dragon", "Dragon"], Ph: ["Phoenix", "Phoenix"]};
const RANKS = {T: "10", J: "J", Q: "Q", K: "K", A: "A"};

function cardInfo(name) {
  // "7j" -> rank 7 of Jade; "Ph=9" -> the Phoenix as a 9.
  const [base, as] = name.split("=");
  if (SPECIAL[base]) return {face: SPECIAL[base][0], sym: "", suit: "x", title: SPECIAL[base][1] + (as ? " as " + (RANKS[as] || as) : ""), as: as ? (RANKS[as] || as) : ""};
  const rank = RANKS[base[0]] || base[0], suit = SUITS[base[1]] || ["?", "?"];
  return {face: rank, sym: suit[0], suit: base[1], title: rank + " of " + suit[1], as: ""};
}
function cardEl(name, opts) {
  const c = cardInfo(name), base = name.split("=")[0];
  const kids = [el("span", {class: "rank", text: c.face})];
  if (c.sym) kids.push(el("span", {class: "suit", "aria-hidden": "true", text: c.sym}));
  if (c.as) kids.push(el("span", {class: "as", text: "=" + c.as}));
  const attrs = {class: "card " + c.suit + (base.length > 2 || SPECIAL[base] ? " special" : ""), "data-card": base, title: c.title, role: "img", "aria-label": c.title};
  Object.assign(attrs, opts || {});
  return el("span", attrs, ...kids);
}
function cardsEl(names, opts) { return el("span", {class: "cards"}, ...names.map(n => cardEl(n, opts))); }
function playCards(play) { return play === "pass" ? [] : play.split(" "); }
function backs(n) {
  return el("span", {class: "cards hand hidden-hand", "aria-label": n + " hidden cards"}, ...Array.from({length: n}, () => el("span", {class: "card back", "aria-hidden": "true", text: "??"})));
}

function seatOrder(bottom) { return {[bottom]: "s", [(bottom + 1) % 4]: "e", [(bottom + 2) % 4]: "n", [(bottom + 3) % 4]: "w"}; }
function viewedSeat(v) { return /^[0-3]$/.test(String(v.perspective)) ? Number(v.perspective) : 0; }

function turnEl(t, names, cls) {
  // One turn of a trick: who, the cards and the play's name (or "pass").
  if (t.play === "pass") return el("div", {class: "turn pass " + (cls || "")}, el("span", {class: "who", text: names[t.seat]}), el("span", {class: "muted", text: " passes"}));
  return el("div", {class: "turn " + (t.bomb ? "bomb " : "") + (cls || "")}, el("span", {class: "who", text: names[t.seat] + (t.out_of_turn ? " (out of turn)" : "")}),
    cardsEl(playCards(t.play)), el("span", {class: "label", text: t.label}));
}

/* renderTable(root, v, opts): v is the step's view (replay, live or seat); opts.bottom the
 * seat drawn at the bottom, opts.hand(seat, cards) builds a seat's own hand (the person's). */
function renderTable(root, v, opts) {
  opts = opts || {};
  const bottom = opts.bottom ?? viewedSeat(v);
  const pos = seatOrder(bottom);
  const names = v.seats.map(s => s.name);
  const entries = v.entries || [];
  const lastTurn = {};
  for (const t of entries) lastTurn[t.seat] = t;
  const seats = v.seats.map((s, i) => {
    const calls = [];
    if (s.grand) calls.push(el("span", {class: "badge G", text: "Grand Tichu"}));
    if (s.tichu) calls.push(el("span", {class: "badge T", text: "Tichu"}));
    if (s.out) calls.push(el("span", {class: "badge out", text: ["", "1st out", "2nd out", "3rd out", "4th"][s.out] || "out"}));
    const recv = v.received && v.received[i];
    let hand;
    if (opts.hand && i === bottom) hand = opts.hand(i, s.cards, recv || []);
    else if (s.cards === null || s.cards === undefined) hand = backs(s.count);
    else hand = el("span", {class: "cards hand"}, ...s.cards.map(c => recv && recv.includes(c) ? cardEl(c, {class: "card " + cardInfo(c).suit + " got", title: cardInfo(c).title + " (received)"}) : cardEl(c)));
    const given = v.exchange && v.exchange[i];
    const exch = [];
    if (given) exch.push(el("div", {class: "exch"}, el("span", {class: "muted", text: "passed: "}),
      ...["→ " + names[(i + 1) % 4], "↑ partner " + names[(i + 2) % 4], "← " + names[(i + 3) % 4]].map((d, k) => el("span", {class: "dir"}, d + " ", cardEl(given[k])))));
    if (recv) exch.push(el("div", {class: "exch received"}, el("span", {class: "muted", text: "received: "}),
      ...[names[(i + 3) % 4], "partner " + names[(i + 2) % 4], names[(i + 1) % 4]].map((d, k) => el("span", {class: "dir"}, "from " + d + " ", cardEl(recv[k], {class: "card " + cardInfo(recv[k]).suit + " got"})))));
    const turn = lastTurn[i];
    const won = "won " + s.won_points + " pts" + (s.won_cards === null || s.won_cards === undefined ? "" : " (" + s.won_cards + " cards)");
    return el("section", {class: "seat seat-" + i + " pos-" + pos[i] + (v.to_act === i ? " act" : "") + (i === bottom ? " me" : ""), "data-seat": i, "aria-label": "seat " + i + ", " + s.name},
      el("h3", {}, el("span", {class: "team-" + s.team, text: s.name}), el("span", {class: "muted", text: "team " + s.team + " · seat " + i + " · " + s.count + " cards"}), ...calls,
        v.to_act === i ? el("span", {class: "badge act", text: "to play"}) : null,
        v.clocks && v.clocks[i] !== undefined ? el("span", {class: "badge clock", title: "time left on this decision", text: Math.round(v.clocks[i] / 1000) + " s"}) : null),
      el("div", {class: "last-turn", "data-seat": i}, turn ? turnEl(turn, names) : null),
      hand, ...exch, el("div", {class: "muted won", text: won}));
  });
  const center = [];
  center.push(el("div", {class: "where muted", text: "hand " + v.hand + " · trick " + v.trick_no + (v.phase ? " · " + v.phase.replace("_", " ") : "")}));
  if (v.wish) center.push(el("div", {class: "wish-badge", text: "wish: " + v.wish}));
  if (v.collected) {
    const c = v.collected;
    for (const t of c.entries.filter(t => t.play !== "pass")) center.push(turnEl(t, names, "faded"));
    center.push(el("div", {class: "collected", text: c.to !== c.seat
      ? names[c.seat] + " wins with the Dragon and gives the trick (" + c.points + " points) to " + names[c.to]
      : names[c.seat] + " takes the trick: " + c.points + " points"}));
  } else if (v.trick && v.trick.length) {
    v.trick.forEach((t, k) => center.push(turnEl({seat: t.seat, play: t.play, label: t.label || t.combo, bomb: /bomb/.test(t.label || "")}, names, k === v.trick.length - 1 ? "top" : "faded")));
  } else if (v.played && v.played.play === "Dg") {
    center.push(turnEl(v.played, names, "top"), el("div", {class: "collected", text: "the Dog passes the lead" + (v.played.lead ? " to " + v.played.lead : "")}));
  } else center.push(el("div", {class: "muted", text: "no cards on the table"}));
  if (v.hand_end) center.push(handEndEl(v.hand_end, v));
  root.replaceChildren(el("div", {class: "board"}, ...seats, el("div", {class: "center", "aria-label": "the trick"}, ...center)));
}
function handEndEl(h, v) {
  const calls = h.calls.map((c, s) => c ? v.seats[s].name + " " + c : null).filter(Boolean);
  return el("div", {class: "hand-end", role: "status"},
    el("strong", {text: "Hand " + h.hand + " over"}),
    el("div", {text: "out: " + h.out.join(", ") + (h.double_victory ? " · double victory, team " + h.double_victory : "")}),
    calls.length ? el("div", {text: "calls: " + calls.join(", ")}) : null,
    ...Object.entries(h.left || {}).map(([who, cards]) => el("div", {class: "left"}, el("span", {text: who + " kept: "}), cardsEl(cards))),
    el("table", {class: "mini"}, el("thead", {}, el("tr", {}, ...["", "A", "B"].map(t => el("th", {text: t})))),
      el("tbody", {}, ...[["card points", h.card_points], ["bets", h.bets], ["hand", h.score], ["total", h.total]].map(([k, x]) =>
        el("tr", {}, el("td", {class: "name", text: k}), el("td", {text: String(x[0])}), el("td", {text: String(x[1])}))))));
}
function renderStatus(root, v) {
  root.replaceChildren(
    el("span", {class: "scores", text: "score A " + v.scores[0] + " : " + v.scores[1] + " B"}),
    el("span", {class: "wish", text: "wish: " + (v.wish || "none")}),
    el("span", {class: "last", text: v.last ? v.last.text : ""}));
}
function gameResult(v) {
  // The game's winner and final score: "team A (Ann and Cid) wins 1040 : 60".
  const [a, b] = v.scores;
  if (!v.winners || !v.winners.length) return a === b ? "a draw at " + a + " : " + b : a + " : " + b;
  const team = v.winners[0] & 1;
  const who = [team, team + 2].map(s => v.seats[s].name).join(" and ");
  return "team " + "AB"[team] + " (" + who + ") wins " + (team ? b + " : " + a : a + " : " + b);
}
function scoreSheet(root, handScores) {
  // The running score sheet: each hand's points per team and the totals after it.
  let a = 0, b = 0;
  const rows = handScores.map((s, i) => { a += s[0]; b += s[1]; return el("tr", {}, el("td", {text: String(i + 1)}), el("td", {text: String(s[0])}), el("td", {text: String(s[1])}), el("td", {text: a + " : " + b})); });
  root.replaceChildren(el("h2", {text: "Score sheet"}), handScores.length
    ? el("table", {class: "sheet"}, el("thead", {}, el("tr", {}, ...["hand", "A", "B", "total"].map(t => el("th", {text: t})))), el("tbody", {}, ...rows))
    : el("p", {class: "muted", text: "No hand finished yet."}));
}
function announce(v) {
  // Screen readers hear each move and what it made happen.
  const box = document.getElementById("announce");
  if (!box) return;
  const parts = [v.last ? v.last.text : ""].concat(v.notes || []).filter(Boolean);
  box.textContent = parts.join(". ");
}
/* The move list: one row per step, kept in step with the board; click a row to go there. */
function renderMoves(root, moves, onPick) {
  let hand = 0;
  const items = [];
  for (const m of moves) {
    if (m.hand !== hand) { hand = m.hand; items.push(el("li", {class: "hand-head", text: "hand " + hand})); }
    items.push(el("li", {"data-step": m.step},
      el("button", {type: "button", class: "move", onclick: () => onPick(m.step)}, el("span", {class: "no", text: m.step + "."}), " " + m.text),
      ...(m.notes || []).map(n => el("div", {class: "note", text: n}))));
  }
  root.replaceChildren(el("h2", {text: "Moves"}), el("ol", {class: "moves", id: "movelist"}, ...items));
}
function markMove(step) {
  const list = document.getElementById("movelist");
  if (!list) return;
  for (const li of list.querySelectorAll("li.here")) li.classList.remove("here");
  const li = list.querySelector(`li[data-step="${step}"]`);
  if (li) { li.classList.add("here"); list.scrollTop = li.offsetTop - list.clientHeight / 2; }
}
