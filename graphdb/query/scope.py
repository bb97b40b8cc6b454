"""Name resolution: which input column a SQL column reference means.

Every relation in a FROM clause is a :class:`Relation`: a plan node whose columns have been
given internal names unique within the query block (``<qualifier>.<name>``), so joins never see
two columns of the same name. A :class:`Scope` resolves ``t.col`` and bare ``col`` against the
relations in FROM, reporting unknown and ambiguous names with suggestions.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from sqlglot import exp

from graphdb.executor.plan import PlanNode

from ..errors import BinderError

__all__ = ["Relation", "Scope", "suggest"]


def suggest(name: str, known: list[str], what: str) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f" ({what}: {', '.join(known)})" if known else ""


@dataclass
class Relation:
    """``node``'s output ``columns`` (internal names), visible as ``qualifier``.``names``."""

    node: PlanNode
    qualifier: str
    names: list[str]
    columns: list[str]
    #: the full name (``g.vertices``) by which a graph table may also be referenced
    full_name: str = ""


class Scope:
    """The columns visible in one query block."""

    def __init__(self, relations: list[Relation]):
        self.relations = relations

    @property
    def columns(self) -> list[str]:
        return [c for r in self.relations for c in r.columns]

    def star(self, qualifier: str | None = None) -> list[tuple[str, str]]:
        """(output name, internal column) of ``*`` or ``t.*``."""
        relations = self.relations if qualifier is None else [self._relation(qualifier)]
        return [(n, c) for r in relations for n, c in zip(r.names, r.columns)]

    def _relation(self, qualifier: str) -> Relation:
        lower = qualifier.lower()
        matches = [r for r in self.relations if lower in (r.qualifier.lower(),
                                                          r.full_name.lower())]
        if not matches:
            known = [r.qualifier for r in self.relations]
            raise BinderError(f"unknown table '{qualifier}'" + suggest(qualifier, known, "tables"))
        if len(matches) > 1:
            full = ", ".join(r.full_name or r.qualifier for r in matches)
            raise BinderError(f"table reference '{qualifier}' is ambiguous ({full}); use an alias")
        return matches[0]

    def resolve(self, column: exp.Column) -> str:
        name, qualifier = column.name, column.table
        if column.args.get("db") is not None:  # g.vertices.id
            qualifier = f"{column.args['db'].name}.{qualifier}"
        if qualifier:
            relation = self._relation(qualifier)
            candidates = [(relation, i) for i, n in enumerate(relation.names) if n == name] or [
                (relation, i) for i, n in enumerate(relation.names) if n.lower() == name.lower()]
            if not candidates:
                raise BinderError(f"table '{relation.qualifier}' has no column '{name}'"
                                  + suggest(name, relation.names, "columns"))
        else:
            candidates = [(r, i) for r in self.relations for i, n in enumerate(r.names)
                          if n == name]
            if not candidates:
                candidates = [(r, i) for r in self.relations for i, n in enumerate(r.names)
                              if n.lower() == name.lower()]
            if not candidates:
                known = sorted({n for r in self.relations for n in r.names})
                raise BinderError(f"unknown column '{name}'" + suggest(name, known, "columns"))
            if len(candidates) > 1:
                where = ", ".join(f"{r.qualifier}.{r.names[i]}" for r, i in candidates)
                raise BinderError(f"column '{name}' is ambiguous ({where}); qualify it")
        relation, index = candidates[0]
        return relation.columns[index]
