"""EXPLAIN: the plan as an indented tree, with the operator choice and, for ANALYZE, what ran."""

from __future__ import annotations

from executor.plan import (
    AlgorithmScan,
    DescribeGraph,
    Filter,
    Limit,
    PlanNode,
    Project,
    ShowGraphs,
    SingleRow,
    Sort,
)

__all__ = ["explain_lines"]


def _describe(node: PlanNode) -> str:
    if isinstance(node, AlgorithmScan):
        opts = ", ".join(f"{k} => {v!r}" for k, v in node.options)
        return f"ALGORITHM {node.algorithm}({node.graph}{', ' + opts if opts else ''})"
    if isinstance(node, Filter):
        return f"FILTER {node.text}"
    if isinstance(node, Project):
        return f"PROJECT {', '.join(node.names)}"
    if isinstance(node, Sort):
        return "SORT " + ", ".join(f"{c} {'DESC' if d == 'descending' else 'ASC'}" for c, d in node.keys)
    if isinstance(node, Limit):
        return f"LIMIT {node.limit if node.limit is not None else 'ALL'} OFFSET {node.offset}"
    if isinstance(node, SingleRow):
        return "SINGLE ROW"
    if isinstance(node, ShowGraphs):
        return "SHOW GRAPHS"
    if isinstance(node, DescribeGraph):
        return f"DESCRIBE {node.graph}"
    return type(node).__name__


def explain_lines(node: PlanNode, choices: dict[int, str], analyzed: dict[int, str] | None = None,
                  depth: int = 0) -> list[str]:
    """One line per operator, children indented below their parent.

    ``choices`` maps ``id(node)`` to the cost model's reason; ``analyzed`` to measured figures.
    """
    pad = "  " * depth
    lines = [pad + ("-> " if depth else "") + _describe(node)]
    if id(node) in choices:
        lines.append(pad + "     choice: " + choices[id(node)])
    if analyzed and id(node) in analyzed:
        lines.append(pad + "     actual: " + analyzed[id(node)])
    for child in node.children():
        lines.extend(explain_lines(child, choices, analyzed, depth + 1))
    return lines
