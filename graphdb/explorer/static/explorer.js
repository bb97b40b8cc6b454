// The graphdb explorer's page: editor, results as table, graph, chart and plan, schema, history.
// It talks to its server over one WebSocket (graphdb/explorer/app.py describes the messages);
// the rows stay on the server, which sends a page at a time. Libraries: CodeMirror 6 (global
// CM) and Cytoscape.js with fCoSE (global cytoscape, loaded when a graph is first drawn), both
// shipped with the package.
"use strict";

const PAGE = 100;
const HISTORY_KEY = "graphdb-explorer-history";
const HISTORY_SIZE = 100;
const LABELS_UP_TO = 300;    // vertex labels drawn up to this many vertices
const ARROWS_UP_TO = 3000;   // arrowheads drawn up to this many edges
const WEBGL_FROM = 4000;     // vertices and edges from which the drawing uses WebGL
const PALETTE = ["#2f6fde", "#e8590c", "#2b8a3e", "#c2255c", "#7048e8", "#0c8599", "#e67700",
                 "#5c940d", "#d6336c", "#1971c2", "#862e9c", "#495057"];

const $ = (id) => document.getElementById(id);
const state = {
  ws: null, nextId: 1, pending: new Map(), running: null, result: null, offset: 0, sort: null,
  desc: false, schema: null, graph: null, cy: null, view: "table", write: false, finished: 0,
};
window.explorer = state;  // what the browser tests read

// -- the server ---------------------------------------------------------------------------------
function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws`);
  state.ws = ws;
  ws.onopen = () => setLink(true);
  ws.onclose = () => {
    setLink(false);
    for (const [, p] of state.pending) p.reject(new Error("the connection to the server closed"));
    state.pending.clear();
  };
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "hello") return hello(message);
    const waiting = state.pending.get(message.id);
    if (!waiting) return;
    if (message.type === "progress") return waiting.progress && waiting.progress(message);
    state.pending.delete(message.id);
    if (message.type === "error") {
      const error = new Error(message.message);
      error.line = message.line; error.column = message.column;
      waiting.reject(error);
    } else waiting.resolve(message);
  };
}

function request(op, fields = {}, progress = null) {
  const id = state.nextId++;
  return {
    id,
    promise: new Promise((resolve, reject) => {
      if (!state.ws || state.ws.readyState !== WebSocket.OPEN) {
        reject(new Error("not connected to the server (reload the page)"));
        return;
      }
      state.pending.set(id, { resolve, reject, progress });
      state.ws.send(JSON.stringify({ op, id, ...fields }));
    }),
  };
}
const ask = (op, fields) => request(op, fields).promise;

function setLink(on) {
  const link = $("link");
  link.textContent = on ? "connected" : "disconnected: reload the page";
  link.className = "badge " + (on ? "on" : "off");
}

function hello(message) {
  state.write = message.write;
  $("database").textContent = message.database;
  const mode = $("mode");
  mode.textContent = message.write ? "read-write" : "read-only";
  mode.className = "badge" + (message.write ? " write" : "");
  loadSchema();
}

// -- the editor ---------------------------------------------------------------------------------
let editor;
const completion = new CM.Compartment();

function makeEditor() {
  const keys = CM.keymap.of([
    { key: "Mod-Enter", run: () => { run(); return true; } },
    ...CM.closeBracketsKeymap, ...CM.defaultKeymap, ...CM.historyKeymap,
    ...CM.completionKeymap, CM.indentWithTab,
  ]);
  editor = new CM.EditorView({
    parent: $("editor"),
    state: CM.EditorState.create({
      doc: sessionStorage.getItem("graphdb-explorer-draft") || "SHOW GRAPHS;",
      extensions: [
        CM.lineNumbers(), CM.history(), CM.drawSelection(), CM.highlightActiveLine(),
        CM.bracketMatching(), CM.closeBrackets(), CM.indentOnInput(),
        CM.syntaxHighlighting(CM.defaultHighlightStyle, { fallback: true }),
        completion.of(languageFor(null)),
        CM.placeholder("SQL: Ctrl+Enter runs it"),
        keys,
        CM.EditorView.updateListener.of((u) => {
          if (u.docChanged) sessionStorage.setItem("graphdb-explorer-draft", text());
        }),
      ],
    }),
  });
  state.editor = editor;
  editor.focus();
}

// The SQL language with completion of the catalog's graphs, tables, columns and functions.
function languageFor(schema) {
  const namespace = {};
  const functions = [];
  if (schema) {
    for (const g of schema.graphs) {
      namespace[g.name] = {};
      for (const t of g.tables) namespace[g.name][t.name] = t.columns.map((c) => c.name);
    }
    for (const f of schema.table_functions)
      functions.push({ label: f.name, type: "function", detail: f.signature, info: f.description,
                       boost: 2 });
    for (const name of schema.functions) functions.push({ label: name, type: "function" });
  }
  const dialect = CM.PostgreSQL;
  const language = CM.sql({ dialect, schema: namespace, upperCaseKeywords: true });
  return [language, CM.autocompletion({ override: [
    CM.schemaCompletionSource({ dialect, schema: namespace }),
    CM.keywordCompletionSource(dialect, true),
    CM.completeFromList(functions),
  ] })];
}

const text = () => editor.state.doc.toString();
function setText(value) {
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
  editor.focus();
}
function insert(value) {
  const { from, to } = editor.state.selection.main;
  editor.dispatch({ changes: { from, to, insert: value },
                    selection: { anchor: from + value.length } });
  editor.focus();
}

// -- running ------------------------------------------------------------------------------------
function run() {
  const sql = (editor.state.selection.main.empty ? text()
    : editor.state.sliceDoc(editor.state.selection.main.from, editor.state.selection.main.to))
    .trim();
  if (!sql || state.running) return;
  remember(sql);
  const started = performance.now();
  status("running…");
  const call = request("run", { sql }, (p) => {
    status(`running… ${p.elapsed.toFixed(1)} s${p.text ? "  " + p.text : ""}`);
  });
  state.running = call.id;
  $("run").disabled = true; $("cancel").disabled = false;
  call.promise.then((result) => {
    state.lastRoundTrip = performance.now() - started;
    show(result);
    const rows = result.columns.length ? `${result.rows.toLocaleString()} row` +
      (result.rows === 1 ? "" : "s") : (result.message || "OK");
    status(`${rows} · ${result.engine_ms.toFixed(1)} ms`);
  }, (error) => {
    status(error.message + caret(sql, error), true);
  }).finally(() => {
    state.running = null;
    state.finished += 1;
    $("run").disabled = false; $("cancel").disabled = true;
  });
}

function cancel() {
  if (state.running && state.ws) {
    state.ws.send(JSON.stringify({ op: "cancel", target: state.running }));
    status("cancelling…");
  }
}

function caret(sql, error) {
  if (!error.line || !error.column) return "";
  const line = sql.split("\n")[error.line - 1];
  return line === undefined ? "" : `\n  ${line}\n  ${" ".repeat(error.column - 1)}^`;
}

function status(message, error = false) {
  const s = $("status");
  s.textContent = message;
  s.className = error ? "error" : "";
}

// -- results ------------------------------------------------------------------------------------
function show(result) {
  state.result = result;
  state.offset = 0; state.sort = null; state.desc = false;
  state.graph = null;
  $("message").textContent = result.columns.length ? "" : (result.message || "OK");
  renderRows(result.page);
  const numeric = result.columns.some((c) => c.numeric);
  enable("graph", !!result.shape);
  enable("chart", numeric && result.rows > 0);
  enable("plan", !!result.plan);
  if (result.plan) { renderPlan(result.plan); select("plan"); }
  else if (state.view === "graph" && result.shape) select("graph");
  else if (state.view === "chart" && numeric) select("chart");
  else select("table");
}

function enable(view, on) {
  document.querySelector(`#views [data-view=${view}]`).disabled = !on;
}

function select(view) {
  state.view = view;
  state.selectedAt = performance.now();
  for (const b of document.querySelectorAll("#views button"))
    b.classList.toggle("active", b.dataset.view === view);
  for (const v of document.querySelectorAll(".view"))
    v.classList.toggle("active", v.id === "view-" + view);
  if (view === "graph") drawGraph();
  if (view === "chart") chartControls();
}

function cell(value, numeric) {
  const td = document.createElement("td");
  if (value === null) { td.textContent = "NULL"; td.className = "null"; return td; }
  if (typeof value === "object") td.textContent = JSON.stringify(value);
  else td.textContent = String(value);
  if (numeric) td.className = "num";
  td.title = td.textContent;
  return td;
}

function renderRows(rows) {
  const result = state.result;
  const table = $("rows");
  table.replaceChildren();
  if (!result.columns.length) { $("pager").hidden = true; return; }
  const head = table.createTHead().insertRow();
  for (const c of result.columns) {
    const th = document.createElement("th");
    th.textContent = c.name;
    const type = document.createElement("span");
    type.className = "type";
    type.textContent = c.type + (state.sort === c.name ? (state.desc ? " ▼" : " ▲") : "");
    th.append(type);
    th.onclick = () => sortBy(c.name);
    head.append(th);
  }
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    row.forEach((v, i) => tr.append(cell(v, result.columns[i].numeric)));
  }
  $("pager").hidden = false;
  const last = Math.min(state.offset + rows.length, result.rows);
  $("range").textContent = result.rows ? `rows ${(state.offset + 1).toLocaleString()}–` +
    `${last.toLocaleString()} of ${result.rows.toLocaleString()}` : "no rows";
  $("first").disabled = $("prev").disabled = state.offset === 0;
  $("next").disabled = $("last").disabled = last >= result.rows;
}

async function page(offset) {
  const result = state.result;
  offset = Math.max(0, Math.min(offset, Math.max(0, Math.floor((result.rows - 1) / PAGE) * PAGE)));
  try {
    const answer = await ask("page", { result: result.result, offset, limit: PAGE,
                                       sort: state.sort, desc: state.desc });
    state.offset = offset;
    renderRows(answer.rows);
  } catch (error) { status(error.message, true); }
}

function sortBy(column) {
  if (state.sort !== column) { state.sort = column; state.desc = false; }
  else if (!state.desc) state.desc = true;
  else { state.sort = null; state.desc = false; }
  page(0);
}

// -- the graph ----------------------------------------------------------------------------------
async function drawGraph() {
  const result = state.result;
  if (!result || !result.shape || (state.graph && state.graph.result === result.result) ||
      state.drawing === result.result) return;  // drawn, or being read
  $("graph-note").textContent = "reading the graph…";
  let graph;
  const asked = performance.now();
  state.drawing = result.result;
  const library = loadDrawing();  // (the first time) while the server reads the graph
  try { graph = await ask("graph", { result: result.result }); await library; }
  catch (error) { $("graph-note").textContent = error.message; return; }
  finally { state.drawing = null; }
  if (state.result !== result) return;
  graph.result = result.result;
  state.graph = graph;
  const started = performance.now();
  state.graphAskMs = started - asked;
  const choices = ["", ...graph.vertex_attributes.map((a) => a.name)];
  fill($("color-by"), choices, graph.vertex_attributes.length ? choices[choices.length - 1] : "");
  fill($("size-by"), ["", ...graph.vertex_attributes.filter((a) => a.numeric).map((a) => a.name)], "");
  // a large drawing comes laid out by the server (graphdb/explorer/layout.py); fCoSE lays out
  // small ones here
  const placed = graph.positions;
  const looks = nodeLooks(graph.nodes);
  const elements = graph.nodes.map((n, i) => {
    const node = { group: "nodes", data: { ...n, label: label(n.value), ...looks[i] } };
    if (placed) node.position = { x: placed[i][0], y: placed[i][1] };
    return node;
  });
  for (const e of graph.edges) elements.push({ group: "edges", data: e });
  if (state.cy) state.cy.destroy();
  const large = graph.nodes.length + graph.edges.length > WEBGL_FROM;
  // made empty, then filled: with elements, the constructor first runs a grid layout over them
  const cy = cytoscape({
    container: $("cy"), elements: [], pixelRatio: 1, motionBlur: false,
    hideEdgesOnViewport: large, textureOnViewport: large, style: graphStyle(graph),
    // Cytoscape's WebGL renderer draws thousands of elements at interactive speed
    renderer: large ? { name: "canvas", webgl: true } : { name: "canvas" },
  });
  state.cy = cy;
  cy.add(elements);
  const made = performance.now();
  if (placed) fitPlaced(cy, placed);
  else layout(cy, graph.nodes.length);
  state.drawMs = performance.now() - started;
  state.timings = { make: made - started, layout: performance.now() - made };
  $("graph-note").textContent = graph.note || `${graph.nodes.length.toLocaleString()} vertices, ` +
    `${graph.edges.length.toLocaleString()} edges (${graph.shape})` +
    (graph.graph ? "; double-click a vertex to add its neighbours" : "");
  cy.on("tap", "node", (event) => showVertex(event.target));
  cy.on("dbltap", "node", (event) => expand(event.target));
}

// Cytoscape.js, loaded when it is first needed: half the page's code, which a page that
// draws nothing should not wait for.
let drawingLibrary = null;
function loadDrawing() {
  if (!drawingLibrary) drawingLibrary = new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = "/static/vendor/cytoscape.min.js";
    script.onload = resolve;
    script.onerror = () => { drawingLibrary = null; reject(new Error("could not load the drawing library")); };
    document.head.append(script);
  });
  return drawingLibrary;
}

// The view on positions the server computed, from the positions themselves (cy.fit() would
// first measure every element).
function fitPlaced(cy, placed, padding = 20) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const [x, y] of placed) {
    x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
  }
  const w = cy.width(), h = cy.height();
  const zoom = Math.min(2, (w - 2 * padding) / Math.max(1, x1 - x0),
                        (h - 2 * padding) / Math.max(1, y1 - y0));
  cy.viewport({ zoom, pan: { x: (w - zoom * (x0 + x1)) / 2, y: (h - zoom * (y0 + y1)) / 2 } });
}

function label(value) {
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function graphStyle(graph) {
  const labels = graph.nodes.length <= LABELS_UP_TO;
  const arrows = graph.directed && graph.edges.length <= ARROWS_UP_TO;
  return [
    { selector: "node", style: {
      "background-color": "data(color)", width: "data(size)", height: "data(size)",
      label: labels ? "data(label)" : "", "font-size": 9, color: "#333",
      "text-valign": "bottom", "text-margin-y": 2, "min-zoomed-font-size": 6 } },
    { selector: "edge", style: {
      width: 1, "line-color": "#aab4c3", "curve-style": arrows ? "bezier" : "haystack",
      "target-arrow-shape": arrows ? "triangle" : "none", "target-arrow-color": "#aab4c3",
      "arrow-scale": 0.6 } },
    { selector: "node:selected", style: { "border-width": 3, "border-color": "#111" } },
  ];
}

function layout(cy, count, fit = true) {
  const options = count <= 1 ? { name: "grid" } : {
    name: "fcose", quality: "default", randomize: true,
    animate: false, fit, padding: 20, nodeDimensionsIncludeLabels: false, numIter: 2500,
    nodeRepulsion: 6000, idealEdgeLength: 50,
  };
  cy.layout(options).run();
}

// Lay the drawing out again: a large one (as the server first laid it out) by the server.
async function relayout() {
  const cy = state.cy;
  if (!cy) return;
  if (!state.graph.positions) return layout(cy, cy.nodes().length);
  const nodes = cy.nodes();
  const index = new Map();
  nodes.forEach((n, i) => index.set(n.id(), i));
  const edges = cy.edges().map((e) => [index.get(e.data("source")), index.get(e.data("target"))]);
  let answer;
  try { answer = await ask("layout", { count: nodes.length, edges }); }
  catch (error) { $("graph-note").textContent = error.message; return; }
  if (state.cy !== cy) return;
  cy.batch(() => nodes.forEach((n, i) =>
    n.position({ x: answer.positions[i][0], y: answer.positions[i][1] })));
  fitPlaced(cy, answer.positions);
}

function fill(select, options, chosen) {
  select.replaceChildren(...options.map((o) => {
    const option = document.createElement("option");
    option.value = o; option.textContent = o || "—";
    option.selected = o === chosen;
    return option;
  }));
}

// Colour by a column (categories: a palette; numbers: light to dark), size by a numeric one.
function styleBy() {
  const cy = state.cy;
  if (!cy) return;
  const nodes = cy.nodes();
  const looks = nodeLooks(nodes.map((n) => n.data()));
  cy.batch(() => nodes.forEach((n, i) => n.data(looks[i])));
}

// Each vertex's colour and size (of the vertices' data, as the colour and size controls say).
function nodeLooks(datas) {
  const colorBy = $("color-by").value, sizeBy = $("size-by").value;
  const range = (name) => {
    let lo = Infinity, hi = -Infinity;
    for (const d of datas) {
      const v = d[name];
      if (typeof v === "number") { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
    return [lo, hi];
  };
  const numeric = (name) => (state.graph.vertex_attributes.find((a) => a.name === name) || {})
    .numeric;
  const colors = new Map();
  // numbers with a few distinct values (hops, a community id) read best as categories
  let gradient = colorBy && numeric(colorBy);
  if (gradient) {
    const distinct = new Set();
    for (const d of datas) { if (distinct.size > PALETTE.length) break; distinct.add(d[colorBy]); }
    gradient = distinct.size > PALETTE.length;
  }
  const [clo, chi] = gradient ? range(colorBy) : [0, 0];
  const [slo, shi] = sizeBy ? range(sizeBy) : [0, 0];
  const plain = datas.length > 500 ? 7 : datas.length > 50 ? 10 : 16;
  return datas.map((d) => {
    let color = PALETTE[0];
    if (colorBy) {
      const v = d[colorBy];
      if (v === null || v === undefined) color = "#ced4da";
      else if (gradient && chi > clo && typeof v === "number") {
        const t = (v - clo) / (chi - clo);  // yellow (low) to purple (high)
        color = `hsl(${Math.round(50 + 220 * t)}, 75%, ${Math.round(55 - 15 * t)}%)`;
      } else {
        if (!colors.has(v)) colors.set(v, PALETTE[colors.size % PALETTE.length]);
        color = colors.get(v);
      }
    }
    let size = plain;
    if (sizeBy && shi > slo) {
      const v = d[sizeBy];
      if (typeof v === "number") size = 6 + 30 * Math.sqrt((v - slo) / (shi - slo));
    }
    return { color, size };
  });
}

async function showVertex(node) {
  const panel = $("vertex-panel");
  panel.hidden = false;
  const data = node.data();
  const list = document.createElement("dl");
  const add = (k, v) => {
    const dt = document.createElement("dt"); dt.textContent = k;
    const dd = document.createElement("dd"); dd.textContent = label(v);
    list.append(dt, dd);
  };
  for (const a of state.graph.vertex_attributes) if (a.name in data) add(a.name, data[a.name]);
  add("degree in this drawing", node.degree());
  const title = document.createElement("h3");
  title.textContent = "vertex " + data.label;
  panel.replaceChildren(title, list);
  if (state.cy) state.cy.resize();
  if (!state.graph.graph) return;
  const heading = document.createElement("h4");
  heading.textContent = state.graph.graph + ".vertices";
  const stored = document.createElement("dl");
  panel.append(heading, stored);
  const put = (k, v) => {
    const dt = document.createElement("dt"); dt.textContent = k;
    const dd = document.createElement("dd"); dd.textContent = label(v);
    stored.append(dt, dd);
  };
  try {
    const answer = await ask("vertex", { graph: state.graph.graph, vertex: data.value });
    if (!answer.properties) { put("", "no such vertex"); return; }
    for (const [k, v] of Object.entries(answer.properties)) put(k, v);
  } catch (error) { put("", error.message); }
}

async function expand(node) {
  const cy = state.cy;
  const graph = state.graph;
  if (!graph.graph) { $("graph-note").textContent = "this drawing is not of one stored graph"; return; }
  let answer;
  try { answer = await ask("expand", { graph: graph.graph, vertex: node.data("value") }); }
  catch (error) { $("graph-note").textContent = error.message; return; }
  const center = node.position();
  const fresh = answer.nodes.filter((n) => cy.getElementById(n.id).empty());
  const radius = 40 + 4 * fresh.length;
  cy.batch(() => {
    fresh.forEach((n, i) => {
      const angle = (2 * Math.PI * i) / Math.max(1, fresh.length);
      cy.add({ group: "nodes", data: { ...n, label: label(n.value), color: "#e8590c",
                                       size: 10, expanded: true },
               position: { x: center.x + radius * Math.cos(angle),
                           y: center.y + radius * Math.sin(angle) } });
    });
    const drawn = new Set(cy.edges().map((x) => `${x.data("source")}\n${x.data("target")}`));
    for (const e of answer.edges) {
      const exists = drawn.has(`${e.source}\n${e.target}`);
      if (!exists) cy.add({ group: "edges", data: { id: `x${cy.edges().length}-${e.source}-${e.target}`,
                                                    source: e.source, target: e.target } });
    }
  });
  state.expanded = (state.expanded || 0) + fresh.length;
  $("graph-note").textContent = `added ${fresh.length} neighbour${fresh.length === 1 ? "" : "s"}` +
    ` of ${node.data("label")}` + (answer.note ? ` (${answer.note})` : "");
}

// -- the chart ----------------------------------------------------------------------------------
function chartControls() {
  const result = state.result;
  const numeric = result.columns.filter((c) => c.numeric).map((c) => c.name);
  const others = result.columns.map((c) => c.name);
  const value = numeric[numeric.length - 1];
  // a short result (a top k) is bars labelled by its first column; a long one a histogram
  const labelled = result.rows <= 25 && others.length > 1 && others[0] !== value ? others[0] : "";
  if ($("chart-value").dataset.result !== String(result.result)) {
    fill($("chart-value"), numeric, value);
    fill($("chart-label"), ["", ...others], labelled);
    $("chart-value").dataset.result = String(result.result);
  }
  drawChart();
}

async function drawChart() {
  const result = state.result;
  const value = $("chart-value").value;
  const labelled = $("chart-label").value || null;
  let chart;
  try {
    chart = await ask("chart", { result: result.result, value, label: labelled,
                                 log: $("chart-log").checked });
  } catch (error) { $("chart-note").textContent = error.message; return; }
  state.chart = chart;
  const svg = chart.kind === "bars" ? barsSvg(chart.labels, chart.values, chart.x, chart.y)
    : histogramSvg(chart);
  $("chart").replaceChildren(svg);
  $("chart-note").textContent = chart.kind === "bars"
    ? (chart.shown < chart.rows ? `the first ${chart.shown} of ${chart.rows} rows` : "")
    : `${chart.rows.toLocaleString()} values` + (chart.dropped ? `, ${chart.dropped} NULL or ` +
      "non-finite left out" : "");
}

function histogramSvg(chart) {
  const labels = chart.discrete ? chart.bins.map((b) => short(b))
    : chart.counts.map((_, i) => `${short(chart.bins[i])}–${short(chart.bins[i + 1])}`);
  return barsSvg(labels, chart.counts, chart.x, "count");
}

function short(v) {
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return v.toLocaleString();
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(2) : v.toPrecision(3);
}

const SVG = "http://www.w3.org/2000/svg";
function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function barsSvg(labels, values, xName, yName) {
  const W = Math.max(600, $("chart").clientWidth || 800), H = Math.max(300, $("chart").clientHeight || 380);
  const m = { left: 64, right: 16, top: 16, bottom: 70 };
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img",
                          "aria-label": `${yName} by ${xName}` });
  const numbers = values.map((v) => (typeof v === "number" ? v : 0));
  const hi = Math.max(0, ...numbers), lo = Math.min(0, ...numbers);
  const span = hi - lo || 1;
  const w = Math.min(80, (W - m.left - m.right) / Math.max(1, values.length));
  const y = (v) => m.top + (H - m.top - m.bottom) * (hi - v) / span;
  svg.append(el("line", { x1: m.left, x2: W - m.right, y1: y(0), y2: y(0), class: "axis" }));
  svg.append(el("line", { x1: m.left, x2: m.left, y1: m.top, y2: H - m.bottom, class: "axis" }));
  for (let i = 0; i <= 4; i++) {
    const v = lo + (span * i) / 4;
    svg.append(el("text", { x: m.left - 6, y: y(v) + 4, "text-anchor": "end" }, short(v)));
  }
  const every = Math.ceil(values.length / 30);
  numbers.forEach((v, i) => {
    const bar = el("rect", { class: "bar", x: m.left + i * w + 1, width: Math.max(1, w - 2),
                             y: Math.min(y(v), y(0)), height: Math.abs(y(v) - y(0)) });
    bar.append(el("title", {}, `${labels[i]}: ${short(v)}`));
    svg.append(bar);
    if (i % every === 0) {
      const x = m.left + i * w + w / 2, ty = H - m.bottom + 12;
      svg.append(el("text", { x, y: ty, "text-anchor": "end",
                              transform: `rotate(-40 ${x} ${ty})` }, String(labels[i]).slice(0, 18)));
    }
  });
  svg.append(el("text", { x: m.left + (W - m.left - m.right) / 2, y: H - 4,
                          "text-anchor": "middle" }, xName));
  svg.append(el("text", { x: 12, y: m.top + (H - m.top - m.bottom) / 2, "text-anchor": "middle",
                          transform: `rotate(-90 12 ${m.top + (H - m.top - m.bottom) / 2})` }, yName));
  return svg;
}

// -- the plan -----------------------------------------------------------------------------------
function renderPlan(plan) {
  const root = $("plan");
  root.replaceChildren();
  if (plan.root) root.append(planNode(plan.root));
  if (plan.total_ms !== null) {
    const total = document.createElement("div");
    total.className = "total";
    total.textContent = `Total: ${plan.total_ms.toFixed(2)} ms`;
    root.append(total);
  }
}

function planNode(node) {
  const wrap = document.createElement("div");
  const box = document.createElement("div");
  box.className = "op" + (node.device ? " device-" + node.device : "");
  const name = document.createElement("div");
  name.className = "label"; name.textContent = node.label;
  const chips = document.createElement("div");
  chips.className = "chips";
  const chip = (text, cls = "") => {
    const c = document.createElement("span");
    c.className = "chip " + cls; c.textContent = text; chips.append(c);
  };
  if (node.device) chip(node.device, "device " + node.device);
  if (node.variant) chip(node.variant);
  if (node.needs) chip(node.needs);
  if (node.ms !== null) chip(`${node.ms.toFixed(2)} ms`, "time");
  if (node.rows !== null) chip(`${node.rows.toLocaleString()} rows`);
  if (node.metrics) chip(node.metrics);
  const lines = document.createElement("pre");
  lines.textContent = node.lines.filter((l) => !l.text.startsWith("actual: "))
    .map((l) => " ".repeat(l.indent) + l.text).join("\n");
  box.append(name, chips, lines);
  wrap.append(box);
  if (node.children.length) {
    const children = document.createElement("div");
    children.className = "children";
    for (const c of node.children) children.append(planNode(c));
    wrap.append(children);
  }
  return wrap;
}

// -- schema, functions, history -----------------------------------------------------------------
async function loadSchema() {
  let schema;
  try { schema = await ask("schema"); }
  catch (error) { $("schema").textContent = error.message; return; }
  state.schema = schema;
  state.schemaAt = performance.now();
  editor.dispatch({ effects: completion.reconfigure(languageFor(schema)) });
  const tree = $("schema");
  tree.replaceChildren();
  if (!schema.graphs.length) tree.textContent = "no graphs yet";
  for (const g of schema.graphs) {
    const graph = document.createElement("details");
    graph.open = schema.graphs.length <= 3;
    const summary = document.createElement("summary");
    summary.innerHTML = "";
    summary.append(g.name + " ");
    const size = document.createElement("span");
    size.className = "size";
    size.textContent = `${g.directed ? "directed" : "undirected"}${g.weighted ? ", weighted" : ""}` +
      ` · ${g.vertices.toLocaleString()} V · ${g.edges.toLocaleString()} E` +
      (g.bytes ? ` · ${bytes(+g.bytes)}` : "");
    summary.append(size);
    graph.append(summary);
    for (const [k, v] of Object.entries(g.labels)) {
      const line = document.createElement("div");
      line.className = "column"; line.textContent = `${k}: ${v}`;
      graph.append(line);
    }
    for (const t of g.tables) {
      const table = document.createElement("details");
      const ts = document.createElement("summary");
      ts.textContent = `${g.name}.${t.name}`;
      ts.ondblclick = () => insert(`${g.name}.${t.name}`);
      table.append(ts);
      for (const c of t.columns) {
        const column = document.createElement("div");
        column.className = "column";
        column.append(c.name + " ");
        const type = document.createElement("span");
        type.className = "type"; type.textContent = c.type;
        column.append(type);
        column.onclick = () => insert(c.name);
        table.append(column);
      }
      graph.append(table);
    }
    tree.append(graph);
  }
  const functions = $("functions");
  functions.replaceChildren(...schema.table_functions.map((f) => {
    const line = document.createElement("div");
    line.className = "fn"; line.textContent = f.signature; line.title = f.description;
    line.onclick = () => insert(f.name + "(");
    return line;
  }));
}

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function pastStatements() {
  try { return JSON.parse(localStorage.getItem(HISTORY_KEY)) || []; } catch { return []; }
}
function remember(sql) {
  const list = [sql, ...pastStatements().filter((s) => s !== sql)].slice(0, HISTORY_SIZE);
  localStorage.setItem(HISTORY_KEY, JSON.stringify(list));
  renderHistory();
}
function renderHistory() {
  $("history").replaceChildren(...pastStatements().map((sql) => {
    const li = document.createElement("li");
    li.textContent = sql.replace(/\s+/g, " "); li.title = sql;
    li.onclick = () => setText(sql);
    return li;
  }));
}

// -- start --------------------------------------------------------------------------------------
function start() {
  if (new URLSearchParams(location.search).has("token"))  // the cookie holds it from now on
    window.history.replaceState(null, "", location.pathname);
  makeEditor();
  renderHistory();
  $("run").onclick = run;
  $("cancel").onclick = cancel;
  $("refresh").onclick = loadSchema;
  $("clear-history").onclick = () => { localStorage.removeItem(HISTORY_KEY); renderHistory(); };
  $("first").onclick = () => page(0);
  $("prev").onclick = () => page(state.offset - PAGE);
  $("next").onclick = () => page(state.offset + PAGE);
  $("last").onclick = () => page(Number.MAX_SAFE_INTEGER);
  for (const b of document.querySelectorAll("#views button")) b.onclick = () => select(b.dataset.view);
  $("color-by").onchange = $("size-by").onchange = styleBy;
  $("relayout").onclick = relayout;
  $("chart-value").onchange = $("chart-label").onchange = $("chart-log").onchange = drawChart;
  connect();
  state.ready = performance.now();
}

document.addEventListener("DOMContentLoaded", start);
