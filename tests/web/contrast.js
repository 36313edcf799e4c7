(() => {
  // tests/web/test_table_keys.py evaluates this on each page it checks.
  // Every text against its background, and the outlines that mark a state, from the
  // computed styles: AA is 4.5:1 for text (3:1 for large text), 3:1 for a control's marks.
  const parse = c => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lin = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  const lum = c => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const blend = (fg, bg) => [0, 1, 2].map(i => fg[i] * fg[3] + bg[i] * (1 - fg[3])).concat([1]);
  const bgOf = el => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    let bg = [255, 255, 255, 1]; for (const l of layers.reverse()) bg = blend(l, bg); return bg; };
  const opacity = el => { let o = 1; for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity); return o; };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const bad = [];
  for (const el of document.querySelectorAll("body *")) {
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    if (r.width < 2 || r.height < 2 || s.visibility === "hidden") continue;
    const fg0 = parse(s.color); if (!fg0 || fg0[3] === 0) continue;
    const bg = bgOf(el), fg = blend([fg0[0], fg0[1], fg0[2], fg0[3] * opacity(el)], bg);
    const size = parseFloat(s.fontSize), bold = Number(s.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5, c = ratio(fg, bg);
    if (c < need) bad.push(`${el.tagName}.${el.className} "${el.textContent.trim().slice(0, 30)}" ${c.toFixed(2)}`);
  }
  for (const el of document.querySelectorAll("button.card.sel, .seat.act, :focus-visible")) {
    const s = getComputedStyle(el), oc = parse(s.outlineColor);
    if (s.outlineStyle === "none" || !oc) { bad.push(`no outline: ${el.className}`); continue; }
    const c = ratio(oc, bgOf(el.parentElement));
    if (c < 3) bad.push(`outline of ${el.tagName}.${el.className} ${c.toFixed(2)}`);
  }
  return bad;
})
