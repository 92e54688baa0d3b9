"use strict";
// agentv report: the case table (filter, sort, pages of rows) and each case's details, drawn on
// demand. Every value from the run is put on the page as text (textContent, setAttribute), never
// parsed as markup.
(function () {
  const index = JSON.parse(document.getElementById("agentv-index").textContent);
  const ROWS = index.rows; // [id, score, verdict, evaluator ids, missed field ids, scored field ids, dataset id]
  const PAGE = 200;
  const SHORT = 200; // characters of a value shown before "show all"
  const VERDICT_ORDER = { error: 0, fail: 1, xfail: 2, partial: 3, xpass: 4, pass: 5 }; // xfail, xpass: an `xfail:` case
  let limit = PAGE;
  let sortKey = null;
  let sortDir = 1;
  let detailsPromise = null;
  const open = new Set();

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function fill(select, names) {
    names.forEach((name, i) => select.append(el("option", { value: String(i), text: name })));
    if (names.length < 2 && select.id === "f-dataset") select.hidden = true;
  }

  const q = document.getElementById("q");
  const fVerdict = document.getElementById("f-verdict");
  const fEvaluator = document.getElementById("f-evaluator");
  const fField = document.getElementById("f-field");
  const fDataset = document.getElementById("f-dataset");
  fill(fEvaluator, index.evaluators);
  fill(fField, index.fields);
  fill(fDataset, index.datasets);
  const body = document.querySelector("#case-table tbody");
  const more = document.getElementById("more");
  const count = document.getElementById("count");

  function matches(row) {
    if (fVerdict.value && row[2] !== fVerdict.value) return false;
    if (fEvaluator.value && !row[3].includes(Number(fEvaluator.value))) return false;
    if (fField.value && !row[4].includes(Number(fField.value))) return false;
    if (fDataset.value && row[6] !== Number(fDataset.value)) return false;
    const text = q.value.trim().toLowerCase();
    if (text) {
      const missed = row[4].map((i) => index.fields[i]).join(" ").toLowerCase();
      if (!row[0].toLowerCase().includes(text) && !missed.includes(text)) return false;
    }
    return true;
  }

  function compare(a, b) {
    const ra = ROWS[a];
    const rb = ROWS[b];
    let d = 0;
    if (sortKey === "id") d = ra[0] < rb[0] ? -1 : ra[0] > rb[0] ? 1 : 0;
    else if (sortKey === "score") d = ra[1] - rb[1];
    else if (sortKey === "verdict") d = VERDICT_ORDER[ra[2]] - VERDICT_ORDER[rb[2]];
    return d * sortDir || a - b;
  }

  function render() {
    const picked = [];
    for (let i = 0; i < ROWS.length; i++) if (matches(ROWS[i])) picked.push(i);
    if (sortKey) picked.sort(compare);
    body.replaceChildren();
    for (const i of picked.slice(0, limit)) {
      const row = ROWS[i];
      const missed = row[4].map((f) => index.fields[f]).join(", ");
      const tr = el(
        "tr",
        { class: "case", "data-i": String(i) },
        el("td", { text: row[0] }),
        el("td", { class: "num", text: row[1].toFixed(3) }),
        el("td", {}, el("span", { class: "badge " + row[2], text: row[2] })),
        el("td", { class: "muted", text: missed })
      );
      tr.addEventListener("click", () => toggle(i, tr));
      body.append(tr);
      if (open.has(i)) toggle(i, tr, true);
    }
    count.textContent = `${picked.length} of ${ROWS.length} cases` + (picked.length > limit ? `, first ${limit} shown` : "");
    more.hidden = picked.length <= limit;
  }

  function loadDetails() {
    if (!detailsPromise) {
      detailsPromise = (async () => {
        const b64 = document.getElementById("agentv-details").textContent.trim();
        const raw = atob(b64);
        const bytes = new Uint8Array(raw.length);
        for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
        const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
        return JSON.parse(await new Response(stream).text());
      })();
    }
    return detailsPromise;
  }

  function toggle(i, tr, reopen) {
    const next = tr.nextElementSibling;
    if (!reopen && next && next.classList.contains("detail")) {
      next.remove();
      tr.classList.remove("open");
      open.delete(i);
      return;
    }
    open.add(i);
    tr.classList.add("open");
    const cell = el("td", { colspan: "4" }, el("span", { class: "muted", text: "loading…" }));
    const detail = el("tr", { class: "detail", "data-i": String(i) }, cell);
    tr.after(detail);
    loadDetails()
      .then((all) => cell.replaceChildren(caseView(all[i])))
      .catch((err) => cell.replaceChildren(el("span", { class: "error", text: "could not read the details: " + err })));
  }

  // ------------------------------------------------------------------ values

  function valueNode(value) {
    if (value === undefined) return el("span", { class: "muted val", text: "(absent)" });
    let text;
    let length = null;
    if (value && typeof value === "object" && "$cut" in value) {
      text = JSON.stringify(value.$cut);
      length = value.$length;
    } else {
      text = JSON.stringify(value, null, typeof value === "object" && value !== null ? 1 : 0);
    }
    if (text === undefined) text = String(value);
    const span = el("span", { class: "val" });
    const note = length === null ? "" : ` (cut at ${index.value_chars} of ${length} characters: agentv explain shows it whole)`;
    if (text.length <= SHORT) {
      span.append(text);
      if (note) span.append(el("span", { class: "muted", text: note }));
      return span;
    }
    const short = document.createTextNode(text.slice(0, SHORT) + "…");
    const button = el("button", { class: "link", type: "button", text: `show all ${text.length} characters` });
    button.addEventListener("click", (event) => {
      event.stopPropagation();
      short.textContent = text;
      button.remove();
      if (note) span.append(el("span", { class: "muted", text: note }));
    });
    span.append(short, button);
    return span;
  }

  function textNode(value, cls) {
    if (value && typeof value === "object" && "$cut" in value) return valueNode(value);
    return el("span", { class: cls || "", text: value === null || value === undefined ? "" : String(value) });
  }

  function num(value) {
    return typeof value === "number" ? value.toFixed(3) : value === null || value === undefined ? "-" : String(value);
  }

  // ------------------------------------------------------------------ a case

  function caseView(d) {
    const box = el("div", { class: "case-detail" });
    box.append(
      el(
        "p",
        {},
        el("b", { text: d.id }),
        ` · ${d.status} · `,
        el("span", { class: d.verdict, text: d.verdict }),
        ` · score ${num(d.score)} · ${Math.round(d.duration_ms)} ms · ${d.attempts} attempt${d.attempts === 1 ? "" : "s"}`,
        d.dataset ? ` · dataset ${d.dataset}` : ""
      )
    );
    if (d.error) box.append(el("p", { class: "error" }, "error: ", textNode(d.error)));
    for (const evaluator of d.evaluators) box.append(evaluatorView(evaluator, d));
    const answer = el("details", {}, el("summary", { text: "the answer" }));
    answer.append(el("pre", { class: "block" }, d.answer === null ? "(none)" : valueText(d.answer)));
    box.append(answer);
    if (d.stderr) {
      const said = el("details", {}, el("summary", { text: "what the target said on stderr" }));
      said.append(el("pre", { class: "block" }, valueText(d.stderr)));
      box.append(said);
    }
    return box;
  }

  function valueText(value) {
    if (value && typeof value === "object" && "$cut" in value) {
      return `${value.$cut}… (cut at ${index.value_chars} of ${value.$length} characters)`;
    }
    return String(value);
  }

  function evaluatorView(e, d) {
    const box = el("div", { class: "evaluator" });
    box.append(
      el(
        "div",
        {},
        el("b", { text: e.name }),
        ` (${e.type}) · ${e.status} · score ${num(e.score)} · weight ${e.weight}`,
        e.verdict ? " · " : "",
        e.verdict ? el("span", { class: e.verdict, text: e.verdict }) : null
      )
    );
    if (e.reasoning) box.append(el("div", { class: "muted" }, textNode(e.reasoning)));
    if (e.fields) box.append(fieldsView(e));
    else if (e.misses && e.misses.length) {
      const list = el("ul", { class: "misses" });
      for (const miss of e.misses) list.append(el("li", { class: "miss" }, textNode(miss)));
      box.append(list);
    }
    if (e.drawn) box.append(shapesView(e, d));
    if (e.details) {
      const extra = el("details", {}, el("summary", { text: "details" }));
      extra.append(el("pre", { class: "block", text: JSON.stringify(e.details, null, 2) }));
      box.append(extra);
    }
    if (e.children) {
      const children = el("div", { class: "children" });
      for (const child of e.children) children.append(evaluatorView(child, d));
      box.append(children);
    }
    return box;
  }

  function statusClass(status) {
    return status === "hit" ? "hit" : status === "miss" ? "miss" : "other";
  }

  // What was not scored, and line-item columns null on both sides in every row, are folded
  // behind a "show all" (a <details>: it opens and closes without script); the page's data says
  // which (folded_fields, folded_columns).
  function listed(entries) {
    return entries.reduce((n, entry) => n + (entry && typeof entry === "object" && typeof entry.$more === "number" ? entry.$more : 1), 0);
  }

  function fold(hidden, what, content) {
    const summary = el("summary", {}, `show all (${hidden} hidden)`, el("span", { class: "muted", text: ` · ${what}` }));
    const box = el("details", { class: "fold" }, summary);
    box.append(content);
    return box;
  }

  function fieldsView(e) {
    const box = el("div", { class: "fields" });
    const shown = Array.isArray(e.fields) ? e.fields : [];
    const folded = Array.isArray(e.folded_fields) ? e.folded_fields : [];
    if (shown.length || !folded.length) box.append(scrolled(diffTable(shown)));
    if (folded.length) box.append(fold(listed(folded), "fields not scored", scrolled(diffTable(folded))));
    return box;
  }

  // A table in a case's details sits in a box of its own that scrolls sideways when the table is
  // wider than the page: the page itself never widens.
  function scrolled(table) {
    return el("div", { class: "scroll" }, table);
  }

  function diffTable(fields) {
    const table = el("table", { class: "diff" });
    table.append(
      el(
        "thead",
        {},
        el("tr", {}, ...["field", "match", "expected", "got", "status", "score", "reason"].map((h) => el("th", { text: h })))
      )
    );
    const tbody = el("tbody");
    for (const f of fields) {
      if (!f || typeof f !== "object") continue;
      if (typeof f.$more === "number") {
        tbody.append(el("tr", {}, el("td", { colspan: "7", class: "muted", text: `… ${f.$more} more (agentv explain lists them all)` })));
        continue;
      }
      tbody.append(
        el(
          "tr",
          { class: statusClass(f.status) },
          el("td", {}, textNode(f.path)),
          el("td", { class: "muted" }, textNode(f.match)),
          el("td", { class: "exp" }, valueNode(f.expected)),
          el("td", { class: "got" }, valueNode(f.actual)),
          el("td", { class: statusClass(f.status), text: f.status || "" }),
          el("td", { class: "num", text: num(f.score) }),
          el("td", {}, textNode(f.reason || ""))
        )
      );
      if (f.alignment) tbody.append(el("tr", {}, el("td", { colspan: "7" }, itemsView(f))));
    }
    table.append(tbody);
    return table;
  }

  function itemsView(f) {
    const box = el("div", { class: "items" });
    const a = f.alignment;
    const counts = f.items || {};
    box.append(
      el(
        "div",
        { class: "muted" },
        `items: ${counts.matched ?? "?"} matched of ${counts.expected ?? "?"} expected, ${counts.missing ?? 0} missing, ` +
          `${counts.extra ?? 0} extra, ${counts.wrong ?? 0} with a wrong field · key ${(a.key || []).join(", ")} · ` +
          `threshold ${a.threshold} · ${a.algorithm}` + (a.truncated ? " · listing cut" : "")
      )
    );
    const pairs = Array.isArray(a.pairs) ? a.pairs : [];
    let columns = f.columns;
    if (!Array.isArray(columns)) {
      columns = [];
      for (const p of pairs) for (const sub of p.fields || []) if (sub && !columns.includes(sub.path)) columns.push(sub.path);
    }
    const folded = Array.isArray(f.folded_columns) ? f.folded_columns : [];
    box.append(scrolled(pairsTable(pairs, columns)));
    if (folded.length) {
      const what = `column${folded.length === 1 ? "" : "s"} null on both sides in every row`;
      box.append(fold(folded.length, what, scrolled(pairsTable(pairs, folded))));
    }
    const expected = Array.isArray(f.expected) ? f.expected : [];
    const actual = Array.isArray(f.actual) ? f.actual : [];
    if (a.missing && a.missing.length) {
      box.append(el("h3", { class: "miss", text: `missing (expected, not found): ${a.missing.length}` }));
      for (const i of a.missing) box.append(el("div", {}, `[${i}] `, valueNode(expected[i])));
    }
    const extra = [...(a.extra || []), ...(a.junk || []).filter((j) => !(a.extra || []).includes(j))];
    if (extra.length) {
      box.append(el("h3", { class: "miss", text: `extra (found, not expected): ${extra.length}` }));
      for (const j of extra) box.append(el("div", {}, `[${j}] `, valueNode(actual[j])));
    }
    return box;
  }

  function pairsTable(pairs, columns) {
    const table = el("table", { class: "items-table" });
    table.append(
      el("thead", {}, el("tr", {}, el("th", { text: "expected → got" }), el("th", { text: "similarity" }), ...columns.map((c) => el("th", { text: c }))))
    );
    const tbody = el("tbody");
    for (const p of pairs) {
      const byPath = new Map();
      for (const sub of p.fields || []) if (sub) byPath.set(sub.path, sub);
      const cells = columns.map((c) => {
        const sub = byPath.get(c);
        if (!sub) return el("td", { class: "cell-other", text: "" });
        const cell = el("td", { class: "cell-" + statusClass(sub.status), title: sub.reason || sub.status || "" });
        cell.append(valueNode(sub.expected));
        if (sub.status !== "hit") cell.append(el("br"), "got ", valueNode(sub.actual));
        return cell;
      });
      tbody.append(
        el("tr", { class: statusClass(p.status) }, el("td", { text: `[${p.expected}] → [${p.actual}]` }), el("td", { class: "num", text: num(p.similarity) }), ...cells)
      );
    }
    table.append(tbody);
    return table;
  }

  // ------------------------------------------------------------------ shapes over the image

  const SVG = "http://www.w3.org/2000/svg";

  function svgEl(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    return node;
  }

  function isPoint(v) {
    return Array.isArray(v) && v.length >= 2 && typeof v[0] === "number" && typeof v[1] === "number" && v.length <= 3;
  }

  function coords(items) {
    const out = [];
    for (const item of items || []) {
      if (!Array.isArray(item)) continue;
      if (item.length === 4 && item.every((c) => typeof c === "number")) out.push([item[0], item[1]], [item[2], item[3]]);
      else if (item.every(Array.isArray)) for (const p of item) out.push(p);
      else if (isPoint(item)) out.push(item);
    }
    return out.filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]));
  }

  function draw(svg, items, cls, points, scale) {
    const color = cls === "exp" ? "#1a7f37" : "#d1242f";
    (items || []).forEach((item, i) => {
      if (!Array.isArray(item)) return;
      const style = { fill: "none", stroke: color, "stroke-width": 2 * scale, "vector-effect": "non-scaling-stroke" };
      if (cls === "exp") style["stroke-dasharray"] = "6 3";
      let shape;
      if (points) shape = svgEl("circle", { cx: item[0], cy: item[1], r: 5 * scale, ...style });
      else if (item.length === 4 && item.every((c) => typeof c === "number")) {
        shape = svgEl("rect", { x: item[0], y: item[1], width: item[2] - item[0], height: item[3] - item[1], ...style });
      } else if (item.every(Array.isArray)) shape = svgEl("polygon", { points: item.map((p) => p.join(",")).join(" "), ...style });
      if (!shape) return;
      const title = svgEl("title", {});
      title.textContent = `${cls === "exp" ? "expected" : "answer"}[${i}]`;
      shape.append(title);
      svg.append(shape);
    });
  }

  function shapesView(e, d) {
    const drawn = e.drawn;
    const points = e.type === "coordinate_distance";
    const box = el("div", {});
    box.append(
      el("div", { class: "legend" }, el("span", { class: "exp", text: "- - expected" }), el("span", { class: "cand", text: "— answer" }))
    );
    const frame = el("div", { class: "shapes" });
    const svg = svgEl("svg", { preserveAspectRatio: "none" });
    const image = (d.images || [])[0];
    const place = (width, height) => {
      svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
      const scale = Math.max(width, height) / 640;
      draw(svg, drawn.expected, "exp", points, scale);
      draw(svg, drawn.candidate, "cand", points, scale);
    };
    if (image) {
      const img = el("img", { alt: "case image", src: image });
      img.addEventListener("load", () => place(img.naturalWidth, img.naturalHeight));
      frame.append(img, svg);
    } else {
      const all = coords(drawn.expected).concat(coords(drawn.candidate));
      const maxX = Math.max(1, ...all.map((p) => p[0])) * 1.1;
      const maxY = Math.max(1, ...all.map((p) => p[1])) * 1.1;
      frame.style.width = "480px";
      frame.style.height = `${Math.min(480, Math.max(120, (480 * maxY) / maxX))}px`;
      frame.append(svg);
      place(maxX, maxY);
      box.append(el("div", { class: "muted", text: "no image embedded: shapes drawn on a blank frame" }));
    }
    box.append(frame);
    if (drawn.truncated) box.append(el("div", { class: "muted", text: "more shapes than drawn (first 100 per side)" }));
    return box;
  }

  // ------------------------------------------------------------------ wiring

  for (const control of [q, fVerdict, fEvaluator, fField, fDataset]) {
    control.addEventListener("input", () => {
      limit = PAGE;
      render();
    });
  }
  more.addEventListener("click", () => {
    limit += PAGE * 5;
    render();
  });
  for (const th of document.querySelectorAll("#case-table th[data-sort]")) {
    th.addEventListener("click", () => {
      const key = th.getAttribute("data-sort");
      sortDir = sortKey === key ? -sortDir : key === "score" ? 1 : 1;
      sortKey = key;
      render();
    });
  }
  render();
  window.__agentvReadyAt = performance.now();
  document.documentElement.setAttribute("data-ready", "1");
})();
