/* The start page: every database and its events. */
"use strict";
(async () => {
  const main = document.getElementById("main");
  topBar(null);
  try {
    const dbs = await getJSON("/api/dbs", {});
    main.replaceChildren(el("h1", {text: "Events"}));
    for (const d of dbs) {
      const files = d.events.length === 1 && d.events[0].files;
      if (files) {
        // Replay files: one link each to the replay viewer.
        main.append(el("h2", {text: "Replay files"}), el("ul", {class: "files"}, ...files.map((f, i) =>
          el("li", {}, el("a", {href: "/replay?" + qs({db: d.db, event: d.events[0].name, play: i})}, f)))));
        continue;
      }
      const rows = d.events.map(e => el("tr", {},
        el("td", {class: "name"}, el("a", {href: "/event?" + qs({db: d.db, event: e.name})}, e.name)),
        el("td", {}, e.status === "running" ? el("span", {class: "badge live", text: "running"}) : e.status),
        el("td", {text: e.plays_done + " / " + e.plays_total}), el("td", {text: e.hands}),
        el("td", {class: "name", text: e.bots.join(", ")}),
        el("td", {}, el("a", {href: "/games?" + qs({db: d.db, event: e.name})}, "games"))));
      main.append(el("h2", {}, d.path, d.league ? el("a", {href: "/league?" + qs({db: d.db}), style: "margin-left:.8rem"}, "league table") : null), el("div", {class: "scroll"}, el("table", {},
        el("thead", {}, el("tr", {}, el("th", {class: "name", text: "event"}), el("th", {text: "status"}),
          el("th", {text: "plays"}), el("th", {text: "hands"}), el("th", {class: "name", text: "bots"}), el("th", {text: ""}))),
        el("tbody", {}, ...rows))));
    }
    main.append(...uploadForm());
  } catch (err) { showError(main, err); }
})();

function uploadForm() {
  // A replay file from the person's disk, sent as the request's body; the viewer opens it.
  const input = el("input", {type: "file", id: "upload-file", accept: ".json,application/json"});
  const said = el("p", {id: "upload-said", role: "status"});
  const refuse = text => { said.className = "error"; said.textContent = text; };
  const send = async ev => {
    ev.preventDefault();
    const file = input.files[0];
    if (!file) return refuse("choose a replay file first");
    said.className = "muted";
    said.textContent = "reading " + file.name + " …";
    try {
      const r = await fetch("/api/replay/upload?" + qs({name: file.name}),
        {method: "POST", body: file, headers: {"Content-Type": "application/json"}});
      const body = await r.json().catch(() => ({}));
      if (!r.ok) return refuse(detailText(body.detail) || r.status + " " + r.statusText);
      location.href = body.href;
    } catch (err) { refuse("the upload failed: " + String(err.message || err)); }
  };
  return [el("h2", {text: "Open a replay file"}),
    el("form", {id: "upload", onsubmit: send},
      el("label", {}, "A replay from arena play or arena table: ", input), " ",
      el("button", {type: "submit"}, "open"), said)];
}
