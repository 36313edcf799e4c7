/* A live table: public events as the server lets them through (spectator delay). */
"use strict";
const EVENT = Q.get("event");
const PLAY = Q.get("play") || "0";  // plays are numbered from 0
(async () => {
  const main = document.getElementById("main");
  topBar(EVENT);
  main.replaceChildren(el("h1", {}, `Play ${PLAY} `, el("span", {class: "badge live", id: "state", text: "live"})),
    el("p", {class: "muted", id: "info", text: "waiting for the first collected trick…"}),
    el("div", {id: "status", class: "status"}),
    el("div", {id: "announce", class: "sr-only", "aria-live": "polite", role: "status"}),
    el("div", {class: "table-and-moves"}, el("div", {id: "table"}),
      el("div", {class: "panel"}, el("h2", {text: "Events"}), el("ol", {id: "log", class: "moves"}))),
    el("div", {class: "panel", id: "sheet"}));
  const es = new EventSource("/api/live/stream?" + qs({db: DB, event: EVENT, play: PLAY}));
  let header = null;
  es.addEventListener("table", e => {
    const m = JSON.parse(e.data);
    if (!header) { header = m.header; document.getElementById("info").textContent = `round ${header.round} · table ${header.table} · board ${header.board} · rotation ${header.rotation} · spectator view, delayed until each trick is collected`; }
    renderTable(document.getElementById("table"), m.view);
    renderStatus(document.getElementById("status"), m.view);
    scoreSheet(document.getElementById("sheet"), m.view.hand_scores);
    announce(m.view);
    if (m.view.last) {
      // The events list follows the newest event.
      const log = document.getElementById("log");
      log.append(el("li", {text: m.view.last.text}));
      log.scrollTop = log.scrollHeight;
    }
    document.body.dataset.seen = e.lastEventId;
  });
  es.addEventListener("end", e => {
    es.close();
    const v = JSON.parse(e.data).view;
    const s = document.getElementById("state");
    s.textContent = "over"; s.className = "badge";
    main.append(el("p", {id: "over"}, `Match over: ${v.scores[0]} : ${v.scores[1]} (${v.termination}). `,
      el("a", {href: "/replay?" + qs({db: DB, event: EVENT, play: PLAY})}, "open the replay")));
    document.body.dataset.ended = "1";
  });
  es.onerror = () => { if (es.readyState === EventSource.CLOSED) showError(main, new Error("the live feed is not available")); };
})();
