"""SQL/PGQ's forms of GRAPH_TABLE that reduce to the one-pattern binding (:mod:`.pattern`):

- ``COLUMNS (x.*)``: every property of ``x``, each under its name; a bare variable
  ``COLUMNS (x)``: one column named ``x``, a struct of its properties;
- ``element_id(x)``: a text naming the vertex or edge, unique in the graph (a vertex: its id;
  an edge: ``e:`` and its stored position);
- several comma-separated path patterns in one MATCH, ``MATCH (a)-[]->(b), (b)-[]->(c)``:
  each pattern is matched by its own operator, with the conditions of WHERE that name only
  its variables, and their rows are joined on the vertex variables they share (by id); the
  rest of WHERE and COLUMNS apply to the joined rows.
"""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from ..errors import BinderError, NotSupportedError
from .conditions import conjuncts
from .dialect import EdgePattern, GraphTable, NodePattern

__all__ = ["EDGE_POSITION", "VERTEX_ID", "bind_patterns", "element_ids", "expand_outputs", "uses_position"]

#: The pseudo-property of an edge variable that is its stored position.
EDGE_POSITION = "__position"
#: The pseudo-property of a vertex variable that is its id in the graph (a property graph's
#: ``'Label:key'`` when it has several vertex labels), whatever its properties are called.
VERTEX_ID = "__vid"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def element_ids(table: GraphTable, kinds: dict[str, str]) -> GraphTable:
    """``table`` with ``element_id(x)``, ``SAME(x, y, ...)`` and ``ALL_DIFFERENT(x, y, ...)``
    written over the variables' identities (pseudo-properties)."""
    def variable(node: exp.Expression, call: str) -> tuple[str, str]:
        """(name, 'vertex' | 'edge') of a pattern variable given to ``call``."""
        if not isinstance(node, exp.Column) or node.table:
            raise BinderError(f"{call}() takes pattern variables: {call}(x, ...)")
        name = node.name
        kind = next((k for v, k in kinds.items() if v.lower() == name.lower()), None)
        if kind is None:
            raise BinderError(f"{call}({name}): '{name}' is no vertex or edge variable of "
                              "the pattern")
        return name, kind

    def identity(name: str, kind: str) -> exp.Expression:
        return exp.column(VERTEX_ID if kind == "vertex" else EDGE_POSITION, table=name)

    def rewrite(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Anonymous):
            return node
        call = node.name.lower()
        if call in ("same", "all_different"):  # SQL/PGQ's element predicates
            found = [variable(a, call) for a in node.expressions]
            if any(kind == "path" for _, kind in found):
                raise BinderError(f"{call}() takes vertex and edge variables, not a path")
            if len(found) < 2:
                raise BinderError(f"{call}() takes two or more pattern variables")
            pairs = [(found[0], other) for other in found[1:]] if call == "same" else \
                [(x, y) for i, x in enumerate(found) for y in found[i + 1:]]
            terms = []
            for (a, ka), (b, kb) in pairs:
                if ka != kb:  # a vertex is never the same element as an edge
                    terms.append(exp.false() if call == "same" else exp.true())
                elif call == "same":
                    terms.append(exp.EQ(this=identity(a, ka), expression=identity(b, kb)))
                else:
                    terms.append(exp.NEQ(this=identity(a, ka), expression=identity(b, kb)))
            return exp.paren(exp.and_(*terms), copy=False)
        if call != "element_id":
            return node
        if len(node.expressions) != 1:
            raise BinderError("element_id() takes one pattern variable: element_id(x)")
        name, kind = variable(node.expressions[0], "element_id")
        if kind == "path":  # its vertices and edges, interleaved
            return exp.column("elements", table=name)
        if kind == "vertex":
            return exp.cast(exp.column(VERTEX_ID, table=name), "VARCHAR")
        return exp.DPipe(this=exp.Literal.string("e:"),
                         expression=exp.cast(exp.column(EDGE_POSITION, table=name), "VARCHAR"))

    new = table.copy()
    for key in ("where", "columns"):
        value = new.args.get(key)
        if isinstance(value, list):
            new.set(key, [v.transform(rewrite) for v in value])
        elif value is not None:
            new.set(key, value.transform(rewrite))
    for item in new.args["pattern"]:
        for key in ("where", "group"):
            if item.args.get(key) is not None:
                item.set(key, item.args[key].transform(rewrite))
    new.meta.update(table.meta)
    return new


def uses_position(table: GraphTable) -> bool:
    """Whether ``element_id`` was written over the pseudo-properties."""
    return any(c.name in (EDGE_POSITION, VERTEX_ID) for c in table.find_all(exp.Column))


def expand_outputs(outputs: list[exp.Expression], properties: Callable[[str], list[str]],
                   kinds: dict[str, str], path: str | None) -> list[exp.Expression]:
    """COLUMNS with ``x.*`` as each property of ``x``, a bare ``x`` as a struct of them, and
    ``*`` (DuckPGQ's) as every named vertex's properties, then every named edge's (a name
    taken before gets ``_1``, ``_2``, ... as DuckDB names a subquery's columns)."""
    out: list[exp.Expression] = []
    for item in outputs:
        target = item.this if isinstance(item, exp.Alias) else item
        if isinstance(target, exp.Star):
            for variable, kind in kinds.items():
                if kind in ("vertex", "edge") and not variable.startswith("__"):
                    out.extend(exp.column(prop, table=variable)
                               for prop in _shown(variable, properties, kinds))
            continue
        if isinstance(target, exp.Column) and isinstance(target.this, exp.Star) and target.table:
            variable = _variable(target.table, kinds)
            for prop in _shown(variable, properties, kinds):
                out.append(exp.alias_(exp.column(prop, table=variable), prop, quoted=True))
            continue
        if isinstance(target, exp.Column) and not target.table and \
                _variable(target.name, kinds, must=False) is not None and \
                (path is None or target.name.lower() != path.lower()):
            variable = _variable(target.name, kinds)
            struct = exp.Struct(expressions=[
                exp.PropertyEQ(this=exp.to_identifier(prop, quoted=True),
                               expression=exp.column(prop, table=variable))
                for prop in _shown(variable, properties, kinds)])
            name = item.alias if isinstance(item, exp.Alias) else target.name
            out.append(exp.alias_(struct, name, quoted=True))
            continue
        out.append(item)
    return out


def _variable(name: str, kinds: dict[str, str], must: bool = True) -> str | None:
    found = next((v for v in kinds if v.lower() == name.lower()), None)
    if found is None and must:
        raise BinderError(f"'{name}.*': '{name}' is no vertex or edge variable of the pattern")
    return found


def _shown(variable: str, properties: Callable[[str], list[str]], kinds: dict[str, str]
           ) -> list[str]:
    """The properties ``x.*`` shows: the variable's own (a plain graph's vertex or edge
    columns; a property graph's labels' properties)."""
    return [p for p in properties(variable) if p not in (EDGE_POSITION, VERTEX_ID)]


# -- several path patterns ----------------------------------------------------------------------
def _named(pattern: GraphTable, index: int) -> tuple[GraphTable, list[str], list[str]]:
    """The pattern with its anonymous vertices named (``__m<index>v<i>``), and its vertex and
    edge variables."""
    new = pattern.copy()
    vertices, edges = [], []
    for i, item in enumerate(new.args["pattern"]):
        if isinstance(item, NodePattern):
            if item.this is None:
                item.set("this", exp.to_identifier(f"__m{index}v{i}"))
            vertices.append(item.this.name)
        elif isinstance(item, EdgePattern) and item.this is not None:
            edges.append(item.this.name)
        for inner in (item.args.get("source"), item.args.get("target")):
            if inner is not None and inner.this is not None:
                edges.append(inner.this.name)  # (one per step: never shared)
    if new.args.get("path") is not None:
        edges.append(new.args["path"].name)
    return new, vertices, edges


def bind_patterns(table: GraphTable, bind_one: Callable[[GraphTable], tuple[str, list]],
                  generate: Callable[[exp.Expression], str],
                  properties: Callable[[GraphTable, str], list[str]]) -> tuple[str, list]:
    """``MATCH p1, p2, ...`` (see the module docstring): (SQL standing for ``table``, its
    relations); ``properties(pattern, variable)`` lists what ``variable.*`` shows."""
    patterns, owner = [], {}
    for j, item in enumerate([table, *table.args["also"]]):
        named, vertices, others = _named(item, j)
        for variable in others:
            if variable.lower() in owner:
                raise NotSupportedError(f"'{variable}' is named by two path patterns of the "
                                        "MATCH; only vertex variables may be shared")
        patterns.append((named, vertices, others))
        for variable in vertices + others:
            owner.setdefault(variable.lower(), j)
    every = {v.lower() for _, vs, es in patterns for v in vs + es}
    kinds = {v: "vertex" for _, vs, _ in patterns for v in vs}
    kinds.update({e: "edge" for named, _, es in patterns for e in es
                  if named.args.get("path") is None or e != named.args["path"].name})
    table = element_ids(table, kinds)

    def names(node: exp.Expression) -> set[str]:
        found = set()
        for column in node.find_all(exp.Column):
            if not column.table:
                if column.name.lower() in every:
                    found.add(column.name.lower())
                continue
            found.add(column.table.lower())
        return found

    where = conjuncts(table.args.get("where"))
    kinds_of = {v: "vertex" for _, vs, _ in patterns for v in vs}
    kinds_of.update({e: "edge" for _, _, es in patterns for e in es})
    home: dict[str, GraphTable] = {}  # where each variable's properties are read: the first
    for named, vertices, others in patterns:  # pattern that gives it labels, else its first
        for v in vertices + others:
            if v.lower() not in home or _labelled(named, v):
                if v.lower() not in home or not _labelled(home[v.lower()], v):
                    home[v.lower()] = named
    outputs = expand_outputs(list(table.args.get("columns") or []),
                             lambda v: properties(home[v.lower()], v), kinds_of,
                             None)
    if not outputs:  # the id of every named vertex variable, as for one pattern
        named_vertices = dict.fromkeys(v for _, vs, _ in patterns for v in vs
                                       if not v.startswith("__"))
        outputs = [exp.alias_(exp.column("id", table=v), v, quoted=True) for v in named_vertices]
    pushed: dict[int, list[exp.Expression]] = {}
    rest = []
    for condition in where:
        used = names(condition)
        homes = [j for j, (_, vs, es) in enumerate(patterns)
                 if used <= {v.lower() for v in vs + es}]
        if used and homes:
            pushed.setdefault(homes[0], []).append(condition)
        else:
            rest.append(condition)
    needed: dict[int, dict[str, exp.Column]] = {}
    for node in rest + outputs:
        for column in node.find_all(exp.Column):
            if column.table and column.table.lower() in owner:
                j = owner[column.table.lower()]
                needed.setdefault(j, {})[f"{column.table.lower()}.{column.name.lower()}"] = column

    shared = {}
    for j, (_, vertices, _) in enumerate(patterns):
        for v in vertices:
            first = owner[v.lower()]
            if first != j:
                shared.setdefault(v.lower(), []).append(j)
                for k in (first, j):  # joined on the graph's id of the vertex
                    needed.setdefault(k, {})[f"{v.lower()}.{VERTEX_ID}"] = exp.column(
                        VERTEX_ID, table=v)
    sql_parts, inputs = [], []
    for j, (named, _, _) in enumerate(patterns):
        columns = list(needed.get(j, {}).items()) or [
            (f"{named.args['pattern'][0].this.name.lower()}.id",
             exp.column("id", table=named.args["pattern"][0].this.name))]
        conditions = pushed.get(j, [])
        named.set("where", exp.and_(*conditions) if conditions else None)
        named.set("columns", [exp.alias_(column.copy(), key, quoted=True)
                              for key, column in columns])
        named.set("alias", exp.TableAlias(this=exp.to_identifier(f"__m{j}")))
        named.set("also", None)
        sql, found = bind_one(named)
        sql_parts.append(sql)
        inputs.extend(found)

    def over(node: exp.Expression) -> exp.Expression:
        def rename(part: exp.Expression) -> exp.Expression:
            if isinstance(part, exp.Column) and part.table and part.table.lower() in owner:
                key = f"{part.table.lower()}.{part.name.lower()}"
                return exp.Column(this=exp.to_identifier(key, quoted=True),
                                  table=exp.to_identifier(f"__m{owner[part.table.lower()]}"))
            return part

        return node.transform(rename)

    joins = [f'__m{owner[v]}.{_quote(f"{v}.{VERTEX_ID}")} = '
             f'__m{j}.{_quote(f"{v}.{VERTEX_ID}")}' for v, homes in shared.items() for j in homes]
    conditions = joins + [f"({generate(over(c))})" for c in rest]
    select = ", ".join(
        f"{generate(over(o.this if isinstance(o, exp.Alias) else o))} AS "
        f"{_quote(o.alias if isinstance(o, exp.Alias) else _output(o))}" for o in outputs)
    alias = table.args.get("alias")
    # without an alias, the relational engine names it as any subquery (unnamed_subquery, ...)
    alias_sql = f" AS {alias.sql(dialect='duckdb')}" if alias is not None else ""
    where_sql = " WHERE " + " AND ".join(conditions) if conditions else ""
    return (f"(SELECT {select} FROM {', '.join(sql_parts)}{where_sql}){alias_sql}", inputs)


def _labelled(pattern: GraphTable, variable: str) -> bool:
    """Whether ``pattern`` gives ``variable`` a label expression."""
    for item in pattern.args["pattern"]:
        for node in (item, item.args.get("source"), item.args.get("target")):
            if node is not None and node.this is not None and \
                    node.this.name.lower() == variable.lower() and node.args.get("labels"):
                return True
    return False


def _output(node: exp.Expression) -> str:
    if isinstance(node, exp.Column):
        return node.name
    return node.sql()
