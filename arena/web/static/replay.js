/* The replay viewer: step through a play from any perspective; the server sends each step. */
"use strict";
const EVENT = Q.get("event");
const PLAY = Number(Q.get("play") || 0);  // plays are numbered from 0
const state = {step: Number(Q.get("step") || 0), view: Q.get("view") || "spectator", playing: null, outline: null, compare: null};
const cache = new Map();

function stepURL(step, view) { return "/replay?" + qs({db: DB, event: state.event, play: PLAY, step: step, view: view}); }
async function fetchStep(step, view) {
  const key = view + "/" + step;
  if (!cache.has(key)) cache.set(key, getJSON("/api/step", {db: DB, event: EVENT, play: PLAY, step: step, view: view}));
  return cache.get(key);
}
function locate(step) {
  // The hand and trick a step belongs to, from the outline's start steps.
  const o = state.outline;
  let hand = 0;
  o.hand_starts.forEach((s, i) => { if (s <= step) hand = i; });
  let trick = 0;
  o.trick_starts[hand].forEach((s, i) => { if (s <= step) trick = i; });
  return [hand, trick];
}
function target(kind, dir) {
  const o = state.outline, [hand, trick] = locate(state.step);
  if (kind === "hand") {
    const i = Math.max(0, Math.min(o.hand_starts.length - 1, hand + dir));
    return dir < 0 && o.hand_starts[hand] < state.step ? o.hand_starts[hand] : o.hand_starts[i];
  }
  const starts = o.trick_starts.flat();
  const here = starts.lastIndexOf(o.trick_starts[hand][trick]);
  if (dir < 0 && starts[here] < state.step) return starts[here];
  return starts[Math.max(0, Math.min(starts.length - 1, here + dir))];
}
function move(delta) { go(state.step + delta); }
async function go(step, from) {
  // Steps are numbered in the perspective's own count; ``from`` converts another view's number.
  step = Math.max(0, Math.min(state.outline.steps, step));
  state.step = step;
  const v = from ? await getJSON("/api/step", {db: DB, event: EVENT, play: PLAY, step: step, view: state.view, from: from})
                 : await fetchStep(step, state.view);
  if (state.step !== step) return;
  step = state.step = v.step;
  renderTable(document.getElementById("table"), v);
  renderStatus(document.getElementById("status"), v);
  scoreSheet(document.getElementById("sheet"), v.hand_scores);
  announce(v);
  markMove(step);
  renderDecision(v);
  renderCompare();
  document.getElementById("scrub").value = step;
  document.getElementById("stepno").value = step;
  const [hand] = locate(step);
  document.getElementById("hand").value = String(state.outline.hand_starts[hand]);
  // One trick number: the board's (tricks taken so far in the hand, plus one).
  document.getElementById("where").textContent = `step ${step} of ${state.outline.steps} · hand ${v.hand} · trick ${v.trick_no}`;
  const url = stepURL(step, state.view);
  history.replaceState(null, "", url);
  document.getElementById("permalink").href = url;
  fetchStep(Math.min(state.outline.steps, step + 1), state.view);  // the next step, ahead
}
function renderDecision(v) {
  const box = document.getElementById("decision");
  const d = v.decision;
  if (!d) { box.replaceChildren(el("h2", {text: "Decision"}), el("p", {class: "muted", text: "The deal: no decision yet."})); return; }
  const kids = [el("h2", {text: "Decision of seat " + d.seat + " (" + v.seats[d.seat].name + ")"}),
    el("p", {class: "chosen"}, el("strong", {text: "chosen: "}), d.chosen),
    el("p", {class: "think", text: d.asked === null ? "think time: shown in this seat's view or with all cards" : d.asked ? "think time " + d.think_ms.toFixed(2) + " ms" + (state.outline.decision_ms ? " of " + state.outline.decision_ms + " ms" : "") : "not asked: the only legal answer, applied by the referee"})];
  for (const f of d.failures) kids.push(el("p", {class: "error", text: `failure: ${f.kind}, ${f.outcome}${f.detail ? ": " + f.detail : ""}`}));
  if (d.legal) {
    const chosen = d.chosen.slice(d.chosen.indexOf(": ") + 2);
    kids.push(el("div", {class: "muted", text: d.legal.length + " legal answers"}),
      el("ul", {class: "legal"}, ...d.legal.map(t => el("li", {class: t === chosen ? "chosen" : "", text: t}))));
  } else kids.push(el("p", {class: "muted", text: "Legal answers and log are shown in this seat's view or with all cards."}));
  if (d.log) kids.push(el("div", {class: "muted", text: "bot log during the decision (" + d.log.length + " lines)"}), el("pre", {class: "log", text: d.log.join("\n") || "(nothing written)"}));
  box.replaceChildren(...kids);
}
function renderCompare() {
  const box = document.getElementById("compare");
  const c = state.compare;
  if (!c) return;
  if (c.tables.length < 2) { box.replaceChildren(el("h2", {text: "Same board"}), el("p", {class: "muted", text: "No other play of this board is recorded yet."})); return; }
  box.replaceChildren(el("h2", {text: "Same board, other tables"}), el("div", {class: "compare"}, ...c.tables.map(t =>
    el("div", {class: "table-col", "data-play": t.play},
      el("div", {}, t.play === PLAY ? el("strong", {text: "this play (" + t.play + ")"}) : el("a", {href: "/replay?" + qs({db: DB, event: state.event, play: t.play, step: state.step, view: state.view})}, "play " + t.play),
        el("span", {class: "muted", text: ` · round ${t.round} · rotation ${t.rotation} · ${t.diverges ? "diverges at step " + t.diverges : "same actions"}`})),
      el("div", {class: "muted", text: t.seats.join(" · ")}),
      el("ol", {}, ...t.actions.map(a => el("li", {class: (a.step === t.diverges ? "diverge " : "") + (state.view === "spectator" && a.step === state.step ? "here" : ""), text: a.text})))))));
}
function togglePlay() {
  const btn = document.getElementById("playbtn");
  if (state.playing) { clearInterval(state.playing); state.playing = null; btn.textContent = "▶ play"; return; }
  btn.textContent = "❚❚ pause";
  const speed = Number(document.getElementById("speed").value);
  state.playing = setInterval(() => { if (state.step >= state.outline.steps) togglePlay(); else move(1); }, 1000 / speed);
}
(async () => {
  const main = document.getElementById("main");
  try {
    const o = await getJSON("/api/replay", {db: DB, event: EVENT, play: PLAY, view: state.view});
    state.outline = o; state.event = o.event;
    topBar(o.event);
    const b = o.board[0] || {};
    const views = [["spectator", "spectator (public only)"], ["0", "seat 0"], ["1", "seat 1"], ["2", "seat 2"], ["3", "seat 3"], ["all", "all cards"]];
    const viewSel = el("select", {id: "view", onchange: async e => {
      const from = state.view;
      state.view = e.target.value;
      state.outline = await getJSON("/api/replay", {db: DB, event: EVENT, play: PLAY, view: state.view});
      renderMoves(document.getElementById("moves"), state.outline.moves, s => go(s));
      document.getElementById("scrub").max = state.outline.steps;
      document.getElementById("stepno").max = state.outline.steps;
      go(state.step, from); }},
      ...views.map(([v, t]) => { const op = el("option", {value: v, text: t + (v.length === 1 ? " · " + o.seats[Number(v)] : "")}); if (v === state.view) op.selected = true; return op; }));
    const btn = (label, title, fn, id) => el("button", {type: "button", title: title, "aria-label": title.replace(/ \(.*\)$/, ""), onclick: fn, id: id || ""}, label);
    const speed = el("select", {id: "speed", title: "steps per second"}, ...[0.5, 1, 2, 4, 8, 16].map(s => { const op = el("option", {value: s, text: s + " /s"}); if (s === 4) op.selected = true; return op; }));
    const scrub = el("input", {id: "scrub", type: "range", min: 0, max: o.steps, value: state.step, oninput: e => go(Number(e.target.value))});
    const stepno = el("input", {id: "stepno", type: "number", min: 0, max: o.steps, style: "width:5em", onchange: e => go(Number(e.target.value))});
    const handSel = el("select", {id: "hand", onchange: e => go(Number(e.target.value))}, ...o.hand_starts.map((s, i) => el("option", {value: s, text: "hand " + (i + 1)})));
    const res = o.result ? `final ${o.result.scores[0]} : ${o.result.scores[1]}` : "";
    main.replaceChildren(
      el("h1", {text: `Play ${PLAY} of ${o.event}`}),
      el("p", {class: "muted", text: `round ${b.round} · table ${b.table} · rotation ${b.rotation} · ${o.seats.join(" · ")} · ${res} · ${o.termination || ""}`}),
      el("div", {class: "controls"}, el("label", {}, "view ", viewSel), speed, btn("▶ play", "play or pause (space)", togglePlay, "playbtn"),
        el("a", {id: "permalink", href: "#", title: "a link to this moment"}, "permalink"),
        el("a", {id: "download", href: "/api/replay/download?" + qs({db: DB, event: o.event, play: PLAY}), download: ""}, "download the record")),
      el("div", {class: "controls"},
        btn("|‹", "start (Home)", () => go(0)), btn("« hand", "previous hand ([)", () => go(target("hand", -1))),
        btn("‹ trick", "previous trick (↑)", () => go(target("trick", -1))), btn("‹", "step back (←)", () => move(-1), "back"),
        btn("›", "step forward (→)", () => move(1), "forward"), btn("trick ›", "next trick (↓)", () => go(target("trick", 1))),
        btn("hand »", "next hand (])", () => go(target("hand", 1))), btn("›|", "end (End)", () => go(state.outline.steps)), handSel,
        el("label", {}, "step ", stepno)),
      el("div", {class: "controls"}, scrub, el("span", {id: "where", class: "muted"})),
      el("div", {id: "status", class: "status"}),
      el("div", {id: "announce", class: "sr-only", "aria-live": "polite", role: "status"}),
      el("div", {class: "table-and-moves"}, el("div", {id: "table"}), el("div", {class: "panel", id: "moves"})),
      el("div", {class: "panels"}, el("div", {class: "panel", id: "sheet"}), el("div", {class: "panel", id: "decision"}), el("div", {class: "panel", id: "compare"})),
      el("p", {class: "note", text: "Keys: ← → step, ↑ ↓ trick, [ ] hand, Home End, space play or pause."}));
    document.addEventListener("keydown", e => {
      if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
      const keys = {ArrowLeft: () => move(-1), ArrowRight: () => move(1), ArrowUp: () => go(target("trick", -1)),
        ArrowDown: () => go(target("trick", 1)), "[": () => go(target("hand", -1)), "]": () => go(target("hand", 1)),
        Home: () => go(0), End: () => go(state.outline.steps), " ": togglePlay};
      if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
    });
    renderMoves(document.getElementById("moves"), o.moves, s => go(s));
    await go(state.step);
    state.compare = await getJSON("/api/compare", {db: DB, event: EVENT, play: PLAY});
    renderCompare();
    document.body.dataset.ready = "1";
  } catch (err) { showError(main, err); }
})();
