/* A live table: public events as the server lets them through (spectator delay).
 * Every moment received is kept: step back and forth while the play goes on ("follow" returns
 * to the newest); when the play ends, the page moves on to the event's next running play. */
"use strict";
const EVENT = Q.get("event");
const PLAY = Q.get("play") || "0";  // plays are numbered from 0
const live = {moments: [], at: -1, follow: true, header: null};

function show(i) {
  if (!live.moments.length) return;
  live.at = Math.max(0, Math.min(live.moments.length - 1, i));
  live.follow = live.at === live.moments.length - 1;
  const v = live.moments[live.at];
  renderTable(document.getElementById("table"), v);
  renderStatus(document.getElementById("status"), v);
  scoreSheet(document.getElementById("sheet"), v.hand_scores);
  announce(v);
  const scrub = document.getElementById("scrub");
  scrub.max = live.moments.length - 1; scrub.value = live.at;
  document.getElementById("where").textContent = (live.follow ? "following · " : "rewound · ") + "event " + (live.at + 1) + " of " + live.moments.length;
  for (const li of document.querySelectorAll("#log li.here")) li.classList.remove("here");
  const li = document.querySelector(`#log li[data-i="${live.at}"]`);
  if (li) li.classList.add("here");
}
async function nextPlay() {
  // Follow the next play: the event's running plays, the lowest other than this one. With one
  // table at a time the next play starts only once this one is recorded, so ask again until
  // one runs or the event stops.
  let e;
  try { e = await getJSON("/api/event", {db: DB, event: EVENT}); }
  catch (err) { return; }  // the event page is not available: stay on this play
  const next = (e.running || []).find(p => String(p) !== PLAY);
  if (next === undefined) {
    if (e.progress && e.progress.status === "running") setTimeout(nextPlay, 2000);
    return;
  }
  document.body.dataset.next = next;
  const link = "/live?" + qs({db: DB, event: EVENT, play: next});
  const box = document.getElementById("follownext");
  document.getElementById("main").append(el("p", {id: "next"}, "Next: ", el("a", {href: link}, "play " + next), box.checked ? " (opening in 5 s)" : ""));
  // Unticking the box within the 5 s still keeps the page here.
  if (box.checked) setTimeout(() => { if (box.checked) location.href = link; }, 5000);
}
(async () => {
  const main = document.getElementById("main");
  topBar(EVENT);
  const btn = (label, title, fn) => el("button", {type: "button", title: title, "aria-label": title, onclick: fn}, label);
  main.replaceChildren(el("h1", {}, EVENT ? `Play ${PLAY} ` : "The table ", el("span", {class: "badge live", id: "state", text: "live"})),
    el("p", {class: "muted", id: "info", text: "waiting for the first events…"}),
    el("div", {class: "controls"}, btn("‹", "step back", () => show(live.at - 1)), btn("›", "step forward", () => show(live.at + 1)),
      btn("follow ›|", "follow the newest event", () => show(live.moments.length - 1)),
      el("input", {id: "scrub", type: "range", min: 0, max: 0, value: 0, "aria-label": "event", oninput: e => show(Number(e.target.value))}),
      el("span", {id: "where", class: "muted"}),
      // A table with people (arena table) is one game: no next play to follow.
      EVENT ? el("label", {}, el("input", {type: "checkbox", id: "follownext", ...(Q.get("follow") === "0" ? {} : {checked: ""})}), " then the next play") : null),
    el("div", {id: "status", class: "status"}),
    el("div", {id: "announce", class: "sr-only", "aria-live": "polite", role: "status"}),
    el("div", {class: "table-and-moves"}, el("div", {id: "table"}),
      el("div", {class: "panel"}, el("h2", {text: "Events"}), el("ol", {id: "log", class: "moves"}))),
    el("div", {class: "panel", id: "sheet"}));
  const es = new EventSource("/api/live/stream?" + qs({db: DB, event: EVENT, play: PLAY}));
  es.addEventListener("table", e => {
    const m = JSON.parse(e.data);
    if (!live.header) {
      live.header = m.header;
      const h = m.header;
      document.getElementById("info").textContent = h.kind === "table"
        ? `${h.seats.join(", ")} · spectator view (public cards only, shown ${h.delay === "none" ? "at once" : "once each " + h.delay + " is over"})`
        : `round ${h.round} · table ${h.table} · board ${h.board} · rotation ${h.rotation} · spectator view (the organiser's delay applies)`;
    }
    live.moments.push(m.view);
    const i = live.moments.length - 1;
    if (m.view.last) {
      const log = document.getElementById("log");
      log.append(el("li", {"data-i": i}, el("button", {type: "button", class: "move", onclick: () => show(i)}, m.view.last.text)));
      if (live.follow) log.scrollTop = log.scrollHeight;
    }
    if (live.follow) show(i); else document.getElementById("scrub").max = i;
    document.body.dataset.seen = e.lastEventId;
  });
  es.addEventListener("end", e => {
    es.close();
    const v = JSON.parse(e.data).view;
    const s = document.getElementById("state");
    s.textContent = "over"; s.className = "badge";
    if (!EVENT) {  // a table with people: its record is the table's own download
      main.append(el("p", {id: "over"}, "Game over: " + gameResult(v) + ". ",
        el("a", {href: "/api/record", download: ""}, "download the record"), " · ", el("a", {href: "/"}, "the table's lobby")));
      document.body.dataset.ended = "1";
      return;
    }
    main.append(el("p", {id: "over"}, `Match over: ${v.scores[0]} : ${v.scores[1]} (${v.termination}). `,
      el("a", {href: "/replay?" + qs({db: DB, event: EVENT, play: PLAY})}, "open the replay")));
    document.body.dataset.ended = "1";
    nextPlay();
  });
  es.onerror = () => { if (es.readyState === EventSource.CLOSED) showError(main, new Error("the live feed is not available")); };
})();
