/* A person's seat: the table from this seat, its hand as buttons, and the decision asked.
 * The page long-polls /api/seat/state with the seat's token; answers go to /api/seat/answer
 * and the referee checks them as it checks a bot's. */
"use strict";
const TOKEN = Q.get("token") || "";
const st = {version: -1, data: null, sel: [], slots: [null, null, null], tichu: false, asked: 0, clock: null, problem: ""};

async function post(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const out = await r.json();
  if (!r.ok) throw new Error(detailText(out.detail) || r.statusText);
  return out;
}
function sameSet(a, b) { return a.length === b.length && a.every(x => b.includes(x)); }
function toggle(card) {
  const ask = st.data && st.data.ask;
  if (ask && ask.phase === "exchange") {
    const at = st.slots.indexOf(card);
    if (at >= 0) st.slots[at] = null; else { const free = st.slots.indexOf(null); if (free >= 0) st.slots[free] = card; }
  } else {
    const i = st.sel.indexOf(card);
    if (i >= 0) st.sel.splice(i, 1); else st.sel.push(card);
  }
  render();
}
function handButtons(seat, cards, received) {
  // The person's hand: each card a button; selected cards rise.
  const chosen = st.data.ask && st.data.ask.phase === "exchange" ? st.slots : st.sel;
  return el("span", {class: "cards hand mine"}, ...(cards || []).map(c => {
    const info = cardInfo(c);
    const b = el("button", {type: "button", class: "card " + info.suit + (chosen.includes(c) ? " sel" : "") + (received.includes(c) ? " got" : ""),
      "data-card": c, title: info.title + (received.includes(c) ? " (received)" : ""), "aria-pressed": chosen.includes(c) ? "true" : "false",
      "aria-label": info.title, onclick: () => toggle(c)}, el("span", {class: "rank", text: info.face}));
    if (info.sym) b.append(el("span", {class: "suit", "aria-hidden": "true", text: info.sym}));
    return b;
  }));
}
async function sendAnswer(number, body) {
  // The answer to decision ``number``, the one its button was drawn for: a click that arrives
  // after that decision closed (a bomb window's time ran out meanwhile) is refused, and said.
  try {
    await post("/api/seat/answer", Object.assign({token: TOKEN, number: number, tichu: st.tichu}, body));
    st.sel = []; st.slots = [null, null, null]; st.tichu = false; st.problem = "";
    if (st.data.ask && st.data.ask.number === number) st.data.ask = null;
  } catch (err) { st.problem = err.message; }
  render();
}
function actButton(label, fn, cls) { return el("button", {type: "button", class: "act " + (cls || ""), onclick: fn}, label); }
function askPanel(d) {
  const ask = d.ask, names = d.names, me = d.seat;
  const answer = body => sendAnswer(ask.number, body);
  if (!ask) {
    const v = d.view;
    const who = v && v.to_act >= 0 && v.to_act !== me ? names[v.to_act] + " to play" : "waiting";
    return [el("p", {class: "muted", text: d.state === "over" ? "The game is over." : who + "…"})];
  }
  const out = [];
  const ph = ask.phase;
  if (ask.may_call_tichu) out.push(el("label", {class: "tichu"}, el("input", {type: "checkbox", id: "tichu", ...(st.tichu ? {checked: ""} : {}), onchange: e => { st.tichu = e.target.checked; }}), " call Tichu with this answer"));
  if (ph === "grand_tichu") {
    out.push(el("p", {text: "Your first eight cards: call Grand Tichu?"}), el("div", {class: "buttons"}, ...ask.legal.map(l => actButton(l.label, () => answer({index: l.index})))));
  } else if (ph === "exchange") {
    const dirs = ["to " + names[(me + 1) % 4] + " (next)", "to your partner " + names[(me + 2) % 4], "to " + names[(me + 3) % 4] + " (previous)"];
    out.push(el("p", {text: "Pass three cards: click them in this order."}),
      el("div", {class: "slots"}, ...dirs.map((d, k) => el("div", {class: "slot"}, el("span", {class: "muted", text: d + ": "}), st.slots[k] ? cardEl(st.slots[k]) : el("span", {class: "muted", text: "—"})))),
      el("div", {class: "buttons"}, actButton("pass these three cards", () => answer({exchange: st.slots}), st.slots.includes(null) ? "off" : "go")));
    if (st.slots.includes(null)) out[out.length - 1].firstChild.disabled = true;
  } else if (ph === "play" || ph === "bomb_window") {
    const plays = ask.legal.filter(l => l.cards && l.cards.length);
    const pass = ask.legal.find(l => !l.cards || !l.cards.length);
    if (ph === "bomb_window") out.push(el("p", {class: "bomb-ask", text: "Bomb now? The window closes in a moment."}));
    else out.push(el("p", {text: "Your turn: select cards to see the plays they make."}));
    const exact = plays.filter(l => sameSet(l.cards, st.sel));
    const partial = st.sel.length ? plays.filter(l => st.sel.every(c => l.cards.includes(c))).length : plays.length;
    const buttons = exact.map(l => actButton((l.bomb ? "bomb: " : "play ") + l.label.replace(/^bomb: /, ""), () => answer({index: l.index}), l.bomb ? "bomb" : "go"));
    if (ph === "bomb_window") for (const l of plays) if (!exact.includes(l)) buttons.push(actButton(l.label, () => answer({index: l.index}), "bomb"));
    if (pass) buttons.push(actButton(ph === "bomb_window" ? "no bomb" : "pass", () => answer({index: pass.index}), "pass"));
    out.push(el("div", {class: "buttons"}, ...buttons));
    if (ph === "play") out.push(el("p", {class: "muted", id: "hint", text: st.sel.length
      ? (exact.length ? "" : partial ? partial + " legal plays contain these cards: add cards." : "No legal play with these cards.")
      : plays.length + " legal plays" + (pass ? "; or pass" : ": you must play")}));
  } else if (ph === "wish") {
    out.push(el("p", {text: "You played the Mah Jong: wish for a rank?"}), el("div", {class: "buttons wish"}, ...ask.legal.map(l => actButton(l.rank || "no wish", () => answer({index: l.index})))));
  } else if (ph === "dragon_gift") {
    out.push(el("p", {text: "You won the trick with the Dragon: give it to an opponent."}), el("div", {class: "buttons"}, ...ask.legal.map(l => actButton(l.label, () => answer({index: l.index})))));
  }
  return out;
}
function tick() {
  const c = document.getElementById("clock");
  if (!c || !st.clock) return;
  const left = Math.max(0, Math.round((st.clock - Date.now()) / 1000));
  c.textContent = left + " s";
  c.className = "clock" + (left <= 10 ? " low" : "");
}
function render() {
  const d = st.data, main = document.getElementById("main");
  if (!d) return;
  const me = d.seat;
  document.body.dataset.state = d.state;
  document.body.dataset.phase = d.ask ? d.ask.phase : "";
  if (d.ask && d.ask.number !== st.asked) { st.asked = d.ask.number; st.clock = Date.now() + d.ask.left_ms; }
  if (!d.ask) st.clock = null;
  const kids = [el("h1", {}, "Seat " + me + " · " + d.name + " ", el("span", {class: "badge", text: "team " + "AB"[me & 1] + " with " + d.names[(me + 2) % 4]}))];
  if (d.state === "lobby") {
    kids.push(el("p", {text: "Waiting for the game to start. Seats nobody takes get bots when it starts."}),
      el("div", {class: "buttons"}, actButton("start the game", async () => { try { await post("/api/start", {token: TOKEN}); } catch (err) { st.problem = err.message; render(); } }, "go")),
      el("p", {}, el("a", {href: "/"}, "the lobby"), " (invite others from there)"));
  }
  if (d.error) kids.push(el("p", {class: "error", text: d.error}));
  if (d.notice) kids.push(el("p", {class: "notice", text: d.notice}));
  kids.push(el("p", {class: "error-line", id: "problem", role: "alert", text: st.problem}));
  if (d.view) {
    const actBox = el("div", {class: "panel ask", id: "ask"}, el("h2", {}, "Your move ", d.ask ? el("span", {id: "clock", class: "clock"}) : null), ...askPanel(d));
    const table = el("div", {id: "table"});
    kids.push(el("div", {class: "status", id: "status"}), el("div", {id: "announce", class: "sr-only", "aria-live": "polite", role: "status"}), actBox,
      el("div", {class: "table-and-moves"}, table, el("div", {class: "panel"}, el("h2", {text: "Events"}), el("ol", {class: "moves", id: "log"}, ...d.notes.map(n => el("li", {text: n.text}))))),
      el("div", {class: "panel", id: "sheet"}));
    main.replaceChildren(...kids);
    renderTable(table, d.view, {bottom: me, hand: handButtons});
    renderStatus(document.getElementById("status"), d.view);
    scoreSheet(document.getElementById("sheet"), d.view.hand_scores);
    const log = document.getElementById("log");
    log.scrollTop = log.scrollHeight;
    const last = d.notes[d.notes.length - 1];
    document.getElementById("announce").textContent = (d.ask ? "Your move. " : "") + (last ? last.text : "");
    tick();
  } else main.replaceChildren(...kids);
  if (d.replay) main.append(el("p", {id: "over"}, "Game over: the record is written to " + d.replay + ". ", el("a", {href: "/api/record", download: ""}, "download the record")));
}
function sitForm(main, message) {
  const name = el("input", {id: "name", placeholder: "your name", maxlength: "24"});
  main.replaceChildren(el("h1", {text: "Take your seat"}), el("p", {class: "muted", text: message}),
    el("div", {class: "controls"}, name, actButton("sit down", async () => {
      try { await post("/api/sit", {token: TOKEN, name: name.value}); loop(); } catch (err) { showError(main, err); }
    }, "go")));
}
async function loop() {
  const main = document.getElementById("main");
  topBar(null);
  for (;;) {
    let d;
    try {
      const r = await fetch("/api/seat/state?" + qs({token: TOKEN, since: st.version}));
      d = await r.json();
      if (r.status === 409) { sitForm(main, "This invite link is for a seat nobody has taken yet."); return; }
      if (!r.ok) throw new Error(detailText(d.detail) || r.statusText);
    } catch (err) {
      showError(main, err);
      await new Promise(res => setTimeout(res, 2000));
      continue;
    }
    st.version = d.version;
    st.data = d;
    render();
    document.body.dataset.version = d.version;
    if (d.state === "over" && !d.ask) { document.body.dataset.over = "1"; return; }
  }
}
setInterval(tick, 500);
loop();
