"""Results and graphs in notebooks: the HTML behind ``Result._repr_html_`` and
``GraphHandle._repr_html_``.

A result shows as a table of its first rows with its row count. One whose rows describe a graph
(src/dst columns, paths: see :mod:`graphdb.explorer.shapes`) also shows a small interactive
drawing (drag, zoom, hover for a vertex's id), capped at :data:`MAX_VERTICES` vertices and
:data:`MAX_EDGES` edges with a line saying what was left out. The drawing is an ``<iframe>``
whose document carries Cytoscape.js itself (the package's copy), so it draws offline, in
JupyterLab, the classic notebook, VS Code and the like, and again when the notebook is reopened.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pyarrow as pa

from .results import json_rows
from .shapes import draw, shape_of

__all__ = ["result_html", "graph_html", "drawing_html", "MAX_VERTICES", "MAX_EDGES", "ROWS"]

#: What a notebook drawing shows at most.
MAX_VERTICES = 300
MAX_EDGES = 1000
#: Rows a result's table shows.
ROWS = 10
_VENDOR = Path(__file__).parent / "static" / "vendor" / "cytoscape.min.js"

_DRAWING = """<!doctype html><html><head><meta charset="utf-8"><style>
html,body{margin:0;height:100%;font:12px system-ui,sans-serif}
#cy{position:absolute;inset:0 0 18px 0}#info{position:absolute;bottom:0;left:4px;color:#555}
</style><script>@@LIBRARY@@</script></head><body><div id="cy"></div><div id="info"></div>
<script>
const data = @@DATA@@;
const info = document.getElementById("info");
info.textContent = data.caption;
const cy = cytoscape({container: document.getElementById("cy"), elements: data.elements,
  style: [{selector: "node", style: {"background-color": "#2f6fde", width: 10, height: 10,
           label: data.labels ? "data(label)" : "", "font-size": 8}},
          {selector: "edge", style: {width: 1, "line-color": "#aab4c3",
           "curve-style": "bezier", "target-arrow-shape": data.directed ? "triangle" : "none",
           "target-arrow-color": "#aab4c3", "arrow-scale": 0.6}}],
  layout: {name: data.elements.length > 1 ? "fcose" : "grid", animate: false}});
cy.on("mouseover", "node", e => { info.textContent = "vertex " + e.target.data("label"); });
cy.on("mouseout", "node", () => { info.textContent = data.caption; });
</script></body></html>"""


def _cell(value) -> str:
    if value is None:
        return '<td style="color:#999"><i>NULL</i></td>'
    text = json.dumps(value) if isinstance(value, (list, dict)) else str(value)
    if len(text) > 80:
        text = text[:79] + "…"
    return f"<td>{html.escape(text)}</td>"


def table_html(table: pa.Table, rows: int = ROWS) -> str:
    """The first ``rows`` rows as an HTML table, with the row count."""
    head = "".join(f"<th>{html.escape(f.name)}<br><small>{html.escape(str(f.type))}</small>"
                   f"</th>" for f in table.schema)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>"
                   for row in json_rows(table.slice(0, rows)))
    n = table.num_rows
    count = f"{n:,} row{'s' if n != 1 else ''} × {table.num_columns} column" + (
        "s" if table.num_columns != 1 else "")
    if n > rows:
        count += f" (the first {rows} shown)"
    return (f'<table class="graphdb-result"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table><p><small>{count}</small></p>")


def drawing_html(drawing: dict, directed: bool = True, height: int = 360) -> str:
    """A drawing (:func:`graphdb.explorer.shapes.draw`'s) as a self-contained iframe."""
    elements = [{"data": {**n, "label": str(n["value"])}} for n in drawing["nodes"]]
    elements += [{"data": {"id": e["id"], "source": e["source"], "target": e["target"]}}
                 for e in drawing["edges"]]
    caption = drawing.get("note") or (f"{len(drawing['nodes']):,} vertices, "
                                      f"{len(drawing['edges']):,} edges")
    data = {"elements": elements, "caption": caption, "directed": directed,
            "labels": len(drawing["nodes"]) <= 60}
    document = (_DRAWING.replace("@@LIBRARY@@", _VENDOR.read_text())
                .replace("@@DATA@@", json.dumps(data).replace("</", "<\\/")))
    note = drawing.get("note")
    caption_html = f"<p><small>{html.escape(note)}</small></p>" if note else ""
    return (f'<iframe srcdoc="{html.escape(document, quote=True)}" style="width:100%;'
            f'height:{height}px;border:1px solid #ddd" sandbox="allow-scripts"></iframe>'
            + caption_html)


def result_html(table: pa.Table, message: str | None = None) -> str:
    """A result: its table, and its drawing when its rows describe a graph."""
    if table.num_columns == 0:
        return f"<p>{html.escape(message or 'OK')}</p>"
    out = table_html(table)
    shape = shape_of(table, [])
    if shape is not None:
        drawing = draw(table, shape, max_vertices=MAX_VERTICES, max_edges=MAX_EDGES)
        out += drawing_html(drawing)
    return out


def graph_html(name: str, summary: dict, edges: pa.Table, directed: bool) -> str:
    """A stored graph: its size, and a drawing of (the first of) its edges."""
    numbers = ", ".join(f"{summary[k]:,} {k}" for k in ("vertices", "edges") if k in summary)
    head = (f"<p><b>graph {html.escape(name)}</b> ({'directed' if directed else 'undirected'}"
            f"{', ' + numbers if numbers else ''})</p>")
    shape = shape_of(edges, [])
    if shape is None or edges.num_rows == 0:
        return head
    drawing = draw(edges, shape, max_vertices=MAX_VERTICES, max_edges=MAX_EDGES)
    if drawing["note"] is None and summary.get("edges", 0) > edges.num_rows:
        drawing["note"] = (f"Drawn: the first {edges.num_rows:,} of {summary['edges']:,} edges")
    return head + drawing_html(drawing, directed)

