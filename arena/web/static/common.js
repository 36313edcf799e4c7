/* Shared by every page: the query string, JSON fetches, elements (the table is table.js). */
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
  if (!r.ok) throw new Error(detailText(body.detail) || r.statusText);
  return body;
}
function detailText(detail) {
  // An error's detail as one line: a message, or a validation error's field and message.
  if (!detail) return "";
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map(d => (d.loc ? d.loc.slice(1).join(".") + ": " : "") + (d.msg || String(d))).join("; ");
  return String(detail.message || detail);
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
function says(name, verb, plain) {
  // A name with its verb in the right person: "Ann sits", but "You sit".
  return name + " " + (name.toLowerCase() === "you" ? plain : verb);
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
function pct(x) { return x === null || x === undefined ? "–" : (100 * x).toFixed(1) + " %"; }
function num(x, d) { return x === null || x === undefined ? "–" : Number(x).toFixed(d); }
