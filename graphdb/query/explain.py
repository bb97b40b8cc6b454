"""EXPLAIN: the physical plan as a tree that fits 100 columns; ANALYZE adds what each node did.

Every node prints its label (what runs), then its details (for a graph operator: device,
variant, the bytes it needs of which budget, and why), then under ANALYZE its actuals (own time,
rows, the operator's metrics). ``Rename`` nodes relabel columns and do no work: they are folded
into their input. Times under ANALYZE are exclusive: an operator's own time, its inputs' time
subtracted.
"""

from __future__ import annotations

import textwrap

from graphdb.executor.device import format_bytes
from graphdb.executor.physical import PhysicalNode

__all__ = ["WIDTH", "explain_lines"]

#: Columns the tree fits in.
WIDTH = 100
#: Operator metrics that repeat the node's details (kept in the metrics for the Python API).
_RESTATED = frozenset({"device", "variant", "plan", "plan_reason", "strategy", "budget_bytes",
                       "backend", "streamed"})
#: Byte counts shown in KiB/MiB/GiB, and seconds shown in ms.
_BYTES = frozenset({"bytes_moved", "bytes_exchanged", "bytes_per_step"})
_SECONDS = frozenset({"collective_seconds"})
#: Lists longer than this show their first and last values only (per-iteration series).
_LIST_SHOWN = 6


def _brief(value) -> str:
    if isinstance(value, (list, tuple)) and len(value) > _LIST_SHOWN:
        head = ", ".join(str(v) for v in value[:3])
        tail = ", ".join(str(v) for v in value[-2:])
        return f"[{head}, ..., {tail}] ({len(value)} values)"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _unfold(node: PhysicalNode) -> tuple[PhysicalNode, tuple[str, ...] | None]:
    """The first node that does work, and the outermost column names folded on the way."""
    names = None
    while node.folded:
        names = names or node.logical.names
        node = node.inputs[0]
    return node, names


def _actual(node: PhysicalNode, stats: dict) -> str:
    s = stats[id(node)]
    inner = sum(stats[id(c)].seconds for c in (_unfold(i)[0] for i in node.inputs)
                if id(c) in stats)
    parts = [f"{max(s.seconds - inner, 0.0) * 1000:.2f} ms", f"{s.rows} rows"]
    for key, value in s.metrics.items():
        if key in _RESTATED or isinstance(value, dict) or (
                isinstance(value, list) and value and isinstance(value[0], dict)):
            continue  # restated above, or structured detail kept for the Python API
        if key in _BYTES:
            parts.append(f"{key.replace('_', ' ')} {format_bytes(value)}")
        elif key in _SECONDS:
            parts.append(f"{key.replace('_seconds', ' time')} {value * 1000:.2f} ms")
        else:
            parts.append(f"{key.replace('_', ' ')} {_brief(value)}")
    return ", ".join(parts)


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=True, break_on_hyphens=False) or [first.rstrip()]


def explain_lines(plan: PhysicalNode, stats: dict | None = None) -> list[str]:
    """The tree, a line at a time (wrapped to :data:`WIDTH` columns); ``stats`` are the
    runner's, by ``id(node)``, for ANALYZE."""
    lines: list[str] = []

    def emit(node: PhysicalNode, lead: str, child_lead: str) -> None:
        node, names = _unfold(node)
        label = node.label
        if names is not None and node.kind == "Project":
            label = "PROJECT " + (", ".join(n for n in names if not n.startswith("__"))
                                  or f"{len(names)} computed columns")
        lines.extend(_wrap(label, lead, child_lead + ("│   " if node.inputs else "    ")))
        body = child_lead + ("│   " if node.inputs else "    ")
        for detail in node.details:
            lines.extend(_wrap(detail, body, body + "  "))
        if stats and id(node) in stats:
            lines.extend(_wrap("actual: " + _actual(node, stats), body, body + "  "))
        for i, child in enumerate(node.inputs):
            last = i == len(node.inputs) - 1
            emit(child, child_lead + ("└── " if last else "├── "),
                 child_lead + ("    " if last else "│   "))

    emit(plan, "", "")
    return lines
