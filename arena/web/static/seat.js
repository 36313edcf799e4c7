/* A person's seat: the table from this seat, its hand as buttons, and the decision asked.
 * The page long-polls /api/seat/state with the seat's token; answers go to /api/seat/answer
 * and the referee checks them as it checks a bot's. The page is built once and its parts
 * updated in place, so the focus stays where it was (every control has a data-key). */
"use strict";
const TOKEN = Q.get("token") || "";
const st = {version: -1, data: null, sel: [], slots: [null, null, null], tichu: false, asked: 0, answered: 0,
  clock: null, problem: "", sort: "rank", showTrick: false, showHistory: false, built: false, beeped: 0};
const SUIT_ORDER = {x: 0, j: 1, s: 2, p: 3, t: 4};
const REVEAL_MS = 350;
const WISH_KEYS = {"2": "2", "3": "3", "4": "4", "5": "5", "6": "6", "7": "7", "8": "8", "9": "9", "0": "10", J: "J", Q: "Q", K: "K", A: "A", N: "none"};

async function post(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const out = await r.json();
  if (!r.ok) throw new Error(detailText(out.detail) || r.statusText);
  return out;
}
function sameSet(a, b) { return a.length === b.length && a.every(x => b.includes(x)); }
function exchanging() { return !!(st.data && st.data.ask && st.data.ask.phase === "exchange"); }
function toggle(card) {
  if (exchanging()) {
    const at = st.slots.indexOf(card);
    if (at >= 0) st.slots[at] = null; else { const free = st.slots.indexOf(null); if (free >= 0) st.slots[free] = card; }
  } else {
    const i = st.sel.indexOf(card);
    if (i >= 0) st.sel.splice(i, 1); else st.sel.push(card);
  }
  render();
}
function clearSelection() { st.sel = []; st.slots = [null, null, null]; render(); }
function sorted(cards) {
  // The hand as the server sends it (by rank), or by suit: specials first, then each suit by rank.
  if (st.sort !== "suit") return cards;
  const key = c => SUIT_ORDER[cardInfo(c).suit] ?? 0;
  return cards.map((c, i) => [c, i]).sort((x, y) => key(x[0]) - key(y[0]) || x[1] - y[1]).map(x => x[0]);
}
function handButtons(cards, received) {
  // The person's hand: each card a button (Space or a click selects it); selected cards rise.
  const chosen = exchanging() ? st.slots : st.sel;
  return el("div", {class: "cards hand mine", role: "group", "aria-label": "your hand, " + cards.length + " cards"}, ...sorted(cards).map(c => {
    const info = cardInfo(c), on = chosen.includes(c), got = received.includes(c);
    const b = el("button", {type: "button", class: "card " + info.suit + (on ? " sel" : "") + (got ? " got" : ""), "data-card": c, "data-key": "card-" + c,
      title: info.title + (got ? " (received)" : ""), "aria-pressed": on ? "true" : "false", "aria-label": info.title + (got ? ", received" : ""),
      onclick: () => toggle(c)}, el("span", {class: "rank", text: info.face}));
    if (info.sym) b.append(el("span", {class: "suit", "aria-hidden": "true", text: info.sym}));
    return b;
  }));
}
async function sendAnswer(number, body) {
  // The answer to decision ``number``, the one its button was drawn for: a click that arrives
  // after that decision closed (a bomb window's time ran out meanwhile) is refused, and said.
  try {
    st.answered = number;
    await post("/api/seat/answer", Object.assign({token: TOKEN, number: number, tichu: st.tichu}, body));
    st.sel = []; st.slots = [null, null, null]; st.tichu = false; st.problem = "";
    if (st.data.ask && st.data.ask.number === number) st.data.ask = null;
  } catch (err) { st.problem = err.message; }
  render();
}
function actButton(label, fn, cls, key) {
  return el("button", {type: "button", class: "act " + (cls || ""), "data-key": "act-" + (key || label), onclick: fn}, label);
}
function askPanel(d) {
  const ask = d.ask, names = d.names, me = d.seat;
  const answer = body => sendAnswer(ask.number, body);
  if (!ask) {
    const v = d.view;
    if (d.state === "over") return [el("p", {class: "muted", text: "The game is over."})];
    const who = v && v.to_act >= 0 && v.to_act !== me ? names[v.to_act] + " to play" : "waiting";
    return [el("p", {class: "muted", text: who + "…"})];
  }
  const out = [];
  const ph = ask.phase;
  if (ask.may_call_tichu) out.push(el("label", {class: "tichu"}, el("input", {type: "checkbox", id: "tichu", "data-key": "tichu", ...(st.tichu ? {checked: ""} : {}), onchange: e => { st.tichu = e.target.checked; }}), " call Tichu with this answer"));
  if (ph === "grand_tichu") {
    out.push(el("p", {text: "Your first eight cards: call Grand Tichu?"}), el("div", {class: "buttons"}, ...ask.legal.map(l => actButton(l.label, () => answer({index: l.index}), l.label === "no Grand Tichu" ? "pass" : "go"))));
  } else if (ph === "exchange") {
    const dirs = ["to " + names[(me + 1) % 4] + " (next)", "to your partner " + names[(me + 2) % 4], "to " + names[(me + 3) % 4] + " (previous)"];
    const full = !st.slots.includes(null);
    const go = actButton("pass these three cards", () => answer({exchange: st.slots}), full ? "go" : "off", "exchange");
    if (!full) go.disabled = true;
    out.push(el("p", {text: "Pass three cards: select them in this order."}),
      el("div", {class: "slots"}, ...dirs.map((d, k) => el("div", {class: "slot"}, el("span", {class: "muted", text: d + ": "}), st.slots[k] ? cardEl(st.slots[k]) : el("span", {class: "muted", text: "—"})))),
      el("div", {class: "buttons"}, go));
  } else if (ph === "play" || ph === "bomb_window") {
    const plays = ask.legal.filter(l => l.cards && l.cards.length);
    const pass = ask.legal.find(l => !l.cards || !l.cards.length);
    if (ph === "bomb_window") out.push(el("p", {class: "bomb-ask", text: "Bomb now? The window closes in a moment."}),
      el("p", {class: "muted", text: "Say “no bomb” at once to keep the game quick: once a window has run out, the table waits about as long after every play, so that nobody can tell who holds a bomb."}));
    else out.push(el("p", {text: "Your turn: select cards to see the plays they make."}));
    const exact = plays.filter(l => sameSet(l.cards, st.sel));
    const partial = st.sel.length ? plays.filter(l => st.sel.every(c => l.cards.includes(c))).length : plays.length;
    const buttons = exact.map(l => actButton(l.bomb ? "bomb: " + l.label.replace(/^bomb: /, "") : "play " + l.label, () => answer({index: l.index}), l.bomb ? "bomb" : "go", "play-" + l.index));
    if (ph === "bomb_window") for (const l of plays) if (!exact.includes(l)) buttons.push(actButton(l.label, () => answer({index: l.index}), "bomb", "play-" + l.index));
    if (pass) buttons.push(actButton(ph === "bomb_window" ? "no bomb" : "pass", () => answer({index: pass.index}), "pass"));
    if (st.sel.length) buttons.push(actButton("clear", clearSelection, "clear"));
    out.push(el("div", {class: "buttons"}, ...buttons));
    if (ph === "play") out.push(el("p", {class: "muted", id: "hint", text: st.sel.length
      ? (exact.length ? "" : partial ? partial + " legal plays contain these cards: add cards." : "No legal play with these cards.")
      : plays.length + " legal plays" + (pass ? "; or pass" : ": you must play")}));
  } else if (ph === "wish") {
    out.push(el("p", {text: "You played the Mah Jong: wish for a rank?"}), el("div", {class: "buttons wish"}, ...ask.legal.map(l => actButton(l.rank || "no wish", () => answer({index: l.index}), l.rank ? "" : "pass", "wish-" + (l.rank || "none")))));
  } else if (ph === "dragon_gift") {
    out.push(el("p", {text: "You won the trick with the Dragon: give it to an opponent."}), el("div", {class: "buttons"}, ...ask.legal.map(l => actButton(l.label, () => answer({index: l.index}), "go", "gift-" + l.index))));
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
function signal(d) {
  // The tab's title says whose move it is; a new decision in a background tab also sounds.
  const over = d.state === "over";
  document.title = (d.ask ? "▶ Your move" : over ? "Game over" : "Your seat") + " · " + d.name + " · Tichu Arena";
  if (!d.ask || st.beeped === d.ask.number) return;
  st.beeped = d.ask.number;
  if (!document.hidden) return;
  try {
    const ctx = new (window.AudioContext || window.webkitAudioContext)();
    const osc = ctx.createOscillator(), gain = ctx.createGain();
    gain.gain.value = 0.08; osc.frequency.value = 660; osc.connect(gain).connect(ctx.destination);
    osc.start(); osc.stop(ctx.currentTime + 0.18);
  } catch (err) { /* no sound here: the title still says it */ }
}
function notesList(d) {
  // The events of the hand being played; all hands (the hand history) on demand.
  const hand = d.view ? d.view.hand : 0;
  const items = [];
  let head = -1;
  for (const n of d.notes) {
    if (!st.showHistory && n.hand !== hand) continue;
    if (st.showHistory && n.hand !== head) { head = n.hand; items.push(el("li", {class: "hand-head", text: "hand " + n.hand})); }
    items.push(el("li", {text: n.text}));
  }
  return items;
}
function endScreen(d) {
  // The game's end: the winner, the final score, the last hand, the score sheet, what next.
  const v = d.view, me = d.seat, box = document.getElementById("end");
  if (d.state !== "over" || !v) { box.hidden = true; box.replaceChildren(); return; }
  box.hidden = false;
  const won = v.winners && v.winners.length ? ((v.winners[0] & 1) === (me & 1) ? "Your team wins." : "Your team loses.") : "";
  const kids = [el("h2", {text: "Game over"}), el("p", {class: "winner", id: "winner", text: (v.over ? gameResult(v) + ". " : "") + won})];
  if (d.error) kids.push(el("p", {class: "error", text: d.error}));
  if (v.hand_end) kids.push(handEndEl(v.hand_end, v));
  const sheet = el("div", {});
  scoreSheet(sheet, v.hand_scores);
  kids.push(sheet, el("div", {class: "buttons"},
    actButton("play again", async () => { try { await post("/api/again", {token: TOKEN}); } catch (err) { st.problem = err.message; render(); } }, "go", "again"),
    el("a", {href: "/api/record", download: "", "data-key": "record"}, "download the record"), el("a", {href: "/", "data-key": "lobby"}, "the lobby")));
  box.replaceChildren(...kids);
}
function staged(v) {
  // The trick built up turn by turn: bots answer in milliseconds, so the turns that came
  // since the last update are shown one by one (REVEAL_MS apart) before the trick is taken.
  const turns = v.collected ? v.collected.entries : v.entries;
  const key = v.hand + ":" + (v.collected ? v.trick_no - 1 : v.trick_no);
  if (!st.reveal || st.reveal.key !== key) st.reveal = {key: key, shown: st.reveal ? Math.min(1, turns.length) : turns.length, timer: 0};
  const r = st.reveal;
  if (r.shown >= turns.length) return v;
  if (!r.timer) r.timer = setTimeout(() => { r.timer = 0; r.shown += 1; render(); }, REVEAL_MS);
  const shown = turns.slice(0, r.shown);
  document.body.dataset.staged = "1";  // (the tests see that turns were shown one by one)
  return Object.assign({}, v, {collected: null, played: null, entries: shown,
    trick: shown.filter(t => t.play !== "pass").map(t => Object.assign({combo: t.label}, t))});
}
function build(main) {
  main.replaceChildren(
    el("h1", {id: "who"}),
    el("div", {id: "lobbybox"}),
    el("p", {class: "error", id: "error", hidden: ""}),
    el("p", {class: "notice", id: "notice", hidden: ""}),
    el("p", {class: "error-line", id: "problem", role: "alert"}),
    el("div", {class: "status", id: "status"}),
    el("div", {id: "announce", class: "sr-only", "aria-live": "polite", role: "status"}),
    el("section", {class: "panel end", id: "end", hidden: "", "aria-label": "game over"}),
    el("div", {class: "table-and-moves", id: "play"}, el("div", {id: "table"}),
      el("div", {class: "panel"}, el("h2", {text: "Events"}),
        el("div", {class: "buttons"},
          el("button", {type: "button", id: "history", "data-key": "history", "aria-expanded": "false", onclick: () => { st.showHistory = !st.showHistory; render(); }}, "hand history (h)"),
          el("button", {type: "button", id: "lasttrick", "data-key": "lasttrick", "aria-expanded": "false", onclick: () => { st.showTrick = !st.showTrick; render(); }}, "last trick (t)")),
        el("div", {id: "trickbox", hidden: ""}),
        el("ol", {class: "moves", id: "log"}))),
    el("div", {id: "dock", class: "dock"},
      el("div", {class: "panel ask", id: "ask"}),
      el("div", {class: "hand-row"}, el("div", {id: "hand"}),
        el("button", {type: "button", id: "sort", "data-key": "sort", onclick: () => { st.sort = st.sort === "rank" ? "suit" : "rank"; render(); }}))),
    el("p", {class: "muted keys", id: "keys", text: "Keys: ← → move along your hand, Space selects a card, Enter or p plays the selection (or the first answer), s passes, x clears, b bombs, c calls Tichu, 2–9, 0, J, Q, K, A or N wish, o sorts, t last trick, h hand history."}),
    el("div", {class: "panel", id: "sheet"}));
  st.built = true;
}
function render() {
  const d = st.data, main = document.getElementById("main");
  if (!d) return;
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
  if (!st.built) build(main);
  const me = d.seat;
  document.body.dataset.state = d.state;
  document.body.dataset.phase = d.ask ? d.ask.phase : "";
  if (d.ask && d.ask.number !== st.asked) { st.asked = d.ask.number; st.clock = Date.now() + d.ask.left_ms; }
  if (!d.ask) {
    // A decision that closed without this page's answer (the stand-in answered): its selection goes.
    if (st.asked && st.answered !== st.asked) { st.sel = []; st.slots = [null, null, null]; st.tichu = false; }
    st.asked = 0; st.clock = null;
  }
  const mine = d.view ? d.view.seats[me].cards || [] : [];
  st.sel = st.sel.filter(c => mine.includes(c));
  st.slots = st.slots.map(c => c && mine.includes(c) ? c : null);
  signal(d);
  document.getElementById("who").replaceChildren("Seat " + me + " · " + d.name + " ", el("span", {class: "badge", text: "team " + "AB"[me & 1] + " with " + d.names[(me + 2) % 4]}));
  const lobby = document.getElementById("lobbybox");
  if (d.state === "lobby") {
    lobby.replaceChildren(...[el("p", {text: "Waiting for the game to start. Seats nobody takes get bots when it starts."}),
      el("div", {class: "buttons"}, actButton("start the game", async () => { try { await post("/api/start", {token: TOKEN}); } catch (err) { st.problem = err.message; render(); } }, "go", "start")),
      d.invites.length ? el("div", {class: "invites"}, el("p", {text: "Invite others: send each the link of their seat (whoever opens it sits there)."}),
        el("ul", {}, ...d.invites.map(i => el("li", {}, "seat " + i.seat + " (team " + i.team + (i.seat % 2 === me % 2 ? ", your partner" : "") + "): ",
          el("a", {href: i.link, "data-key": "invite-" + i.seat, class: "invite"}, location.origin + i.link))))) : null,
      el("p", {}, el("a", {href: "/"}, "the lobby"), " · ", el("a", {href: "/live"}, "watch the table"))].filter(Boolean));
  } else lobby.replaceChildren();
  const error = document.getElementById("error");
  error.hidden = !d.error || d.state === "over"; error.textContent = d.error;
  const notice = document.getElementById("notice");
  notice.hidden = !d.notice; notice.textContent = d.notice;
  document.getElementById("problem").textContent = st.problem;
  endScreen(d);
  const v = d.view;
  document.getElementById("play").hidden = !v;
  document.getElementById("dock").hidden = !v || d.state === "over";
  document.getElementById("sheet").hidden = !v || d.state === "over";
  document.getElementById("keys").hidden = !v || d.state === "over";
  if (v) {
    renderTable(document.getElementById("table"), staged(v), {bottom: me, hand: () => el("span", {class: "muted", text: "your cards: below"})});
    renderStatus(document.getElementById("status"), v);
    scoreSheet(document.getElementById("sheet"), v.hand_scores);
    const recv = v.received && v.received[me] ? v.received[me] : [];
    document.getElementById("ask").replaceChildren(el("h2", {}, "Your move ", d.ask ? el("span", {id: "clock", class: "clock"}) : null), ...askPanel(d));
    if (!d.ask) document.getElementById("ask").firstChild.textContent = "Waiting";
    document.getElementById("hand").replaceChildren(handButtons(v.seats[me].cards || [], recv));
    document.getElementById("sort").textContent = st.sort === "rank" ? "sort by suit (o)" : "sort by rank (o)";
    const box = document.getElementById("trickbox"), t = v.last_trick;
    box.hidden = !st.showTrick;
    document.getElementById("lasttrick").setAttribute("aria-expanded", String(st.showTrick));
    document.getElementById("history").setAttribute("aria-expanded", String(st.showHistory));
    box.replaceChildren(...(t ? [...t.entries.map(e => turnEl(e, d.names)), el("div", {class: "collected", text: t.to !== t.seat
      ? d.names[t.seat] + " gave it to " + d.names[t.to] + ": " + t.points + " points" : d.names[t.seat] + " took it: " + t.points + " points"})]
      : [el("p", {class: "muted", text: "No trick taken yet this hand."})]));
    const log = document.getElementById("log");
    log.replaceChildren(...notesList(d));
    log.scrollTop = log.scrollHeight;
    const last = d.notes[d.notes.length - 1];
    document.getElementById("announce").textContent = (d.ask ? "Your move. " : "") + (last ? last.text : "");
    tick();
  }
  if (focused) {
    const back = document.querySelector(`[data-key="${CSS.escape(focused)}"]`);
    if (back && back !== document.activeElement) back.focus();
  }
}
function onKey(e) {
  // Shortcuts; typing in a field, or with a modifier, is left alone.
  if (e.ctrlKey || e.metaKey || e.altKey || !st.data) return;
  const tag = e.target && e.target.tagName;
  if (tag === "INPUT" && e.target.type !== "checkbox") return;
  const cards = [...document.querySelectorAll("#hand button.card")];
  const at = cards.indexOf(document.activeElement);
  const press = sel => { const b = document.querySelector("#ask " + sel); if (b && !b.disabled) { b.click(); return true; } return false; };
  const k = e.key;
  const ask = st.data.ask;
  if (ask && ask.phase === "wish" && WISH_KEYS[k.toUpperCase()] !== undefined) {
    const rank = WISH_KEYS[k.toUpperCase()];
    const b = document.querySelector(`#ask [data-key="act-wish-${rank}"]`);
    if (b) { b.click(); e.preventDefault(); }
    return;
  }
  if ((k === "ArrowRight" || k === "ArrowLeft") && cards.length) {
    const next = at < 0 ? 0 : (at + (k === "ArrowRight" ? 1 : cards.length - 1)) % cards.length;
    cards[next].focus();
  } else if (k === "Enter" && at < 0 && tag !== "BUTTON" && tag !== "A") press("button.act.go");
  else if (k === "p") press("button.act.go");
  else if (k === "s") press("button.act.pass");
  else if (k === "b") press("button.act.bomb");
  else if (k === "x" || k === "Escape") clearSelection();
  else if (k === "c" && document.getElementById("tichu")) document.getElementById("tichu").click();
  else if (k === "o") document.getElementById("sort").click();
  else if (k === "t") document.getElementById("lasttrick").click();
  else if (k === "h") document.getElementById("history").click();
  else return;
  e.preventDefault();
}
function sitForm(main, invite) {
  // An invite link: which seat and team it is for; a name (labelled) and "sit down" while
  // the seat can still be taken.
  const kids = [el("h1", {text: "Take your seat"})];
  if (!invite) kids.push(el("p", {class: "error", text: "This link is for no seat of this table: ask for a new invite link."}));
  else if (invite.state !== "lobby" || invite.taken) {
    kids.push(el("p", {id: "invite", text: invite.state === "lobby" ? "Seat " + invite.seat + " is taken." : "The game at this table has " + (invite.state === "over" ? "ended" : "started") + ": every seat is taken."}),
      el("p", {}, el("a", {href: "/live"}, "watch the table"), " · ", el("a", {href: "/"}, "the lobby")));
  } else {
    const name = el("input", {id: "name", placeholder: "your name", maxlength: "24", autocomplete: "nickname"});
    kids.push(el("p", {id: "invite", text: "This invite is for seat " + invite.seat + ", team " + invite.team + ", as partner of " + invite.partner + "."}),
      el("div", {class: "controls"}, el("label", {for: "name"}, "Your name"), name, actButton("sit down", async () => {
        try { await post("/api/sit", {token: TOKEN, name: name.value}); loop(); } catch (err) { showError(main, err); }
      }, "go")));
    main.replaceChildren(...kids);
    name.focus();
    return;
  }
  main.replaceChildren(...kids);
}
async function loop() {
  const main = document.getElementById("main");
  topBar(null);
  for (;;) {
    let d;
    try {
      const r = await fetch("/api/seat/state?" + qs({token: TOKEN, since: st.version}));
      d = await r.json();
      if (r.status === 409) {
        st.built = false;
        sitForm(main, await getJSON("/api/invite", {token: TOKEN}).catch(() => null));
        return;
      }
      if (!r.ok) throw new Error(detailText(d.detail) || r.statusText);
    } catch (err) {
      st.built = false;
      showError(main, err);
      await new Promise(res => setTimeout(res, 2000));
      continue;
    }
    st.version = d.version;
    st.data = d;
    render();
    document.body.dataset.version = d.version;
    document.body.dataset.over = d.state === "over" && !d.ask ? "1" : "";
  }
}
document.addEventListener("keydown", onKey);
setInterval(tick, 500);
loop();
