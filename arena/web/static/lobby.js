/* The lobby of a table with people: take a free seat; bots fill the rest when the game starts. */
"use strict";
async function takeSeat(seat, name) {
  const r = await fetch("/api/sit", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({seat: seat, name: name})});
  const out = await r.json();
  if (!r.ok) throw new Error(detailText(out.detail) || r.statusText);
  location.href = "/seat?" + qs({token: out.token});
}
function renderLobby(main, l) {
  const rows = l.seats.map(s => {
    const kids = [el("h3", {}, el("span", {class: "team-" + s.team, text: "seat " + s.seat + " · team " + s.team}))];
    if (s.person) kids.push(el("p", {text: says(s.name, "sits", "sit") + " here"}));
    else if (l.state === "lobby") {
      const id = "name-" + s.seat;
      const name = el("input", {id: id, placeholder: "your name", maxlength: "24"});
      kids.push(el("p", {class: "muted", text: "free: " + s.name + " (a bot) plays here unless someone sits"}),
        el("div", {class: "controls"}, el("label", {for: id}, "your name"), name, el("button", {type: "button", class: "sit", "data-seat": s.seat, onclick: async () => {
          try { await takeSeat(s.seat, name.value); } catch (err) { document.getElementById("problem").textContent = err.message; }
        }}, "sit here")));
    } else kids.push(el("p", {text: s.name + " (bot)"}));
    return el("section", {class: "seat lobby-seat", "data-seat": s.seat}, ...kids);
  });
  const state = {lobby: "Waiting for players: take a free seat; a seated person starts the game, and finds the invite links for the other seats, on their seat page.", playing: "The game is on.", over: "The game is over."}[l.state];
  // (replaceChildren writes a null as the text "null": absent parts are left out)
  main.replaceChildren(...[el("h1", {text: "A table of four"}), el("p", {text: state}),
    l.error ? el("p", {class: "error", text: l.error}) : null,
    el("p", {class: "error-line", id: "problem", role: "alert"}),
    el("div", {class: "lobby"}, ...rows),
    el("p", {}, el("a", {href: "/live"}, "watch the table"), " (spectators: public cards only, after the organiser's delay)"),
    l.replay ? el("p", {}, "The game's record: ", el("a", {href: "/api/record", download: ""}, "download")) : null].filter(Boolean));
}
(async () => {
  const main = document.getElementById("main");
  topBar(null);
  let since = -1;
  for (;;) {
    try {
      const l = await getJSON("/api/lobby", {since: since});
      since = l.version;
      renderLobby(main, l);
      document.body.dataset.ready = "1";
    } catch (err) { showError(main, err); await new Promise(r => setTimeout(r, 2000)); }
  }
})();
