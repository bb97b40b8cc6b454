"""Binding and planning: a parsed query becomes an :mod:`graphdb.executor.plan` tree.

Names are resolved here, against the catalog (graphs), the algorithm registry (functions,
arguments, output columns), CTEs and the FROM clause, so mistakes are reported before anything
runs, with suggestions. The order of a SELECT block is the textbook one: FROM and joins, WHERE,
GROUP BY and aggregates, HAVING, the select list, DISTINCT, ORDER BY, LIMIT/OFFSET.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from graphdb.executor.arrays import to_arrow
from graphdb.executor.plan import (
    Distinct,
    Filter,
    Join,
    Limit,
    MarkJoin,
    PlanNode,
    Project,
    Rename,
    SetOperation,
    SingleRow,
    Sort,
    UnionAll,
    ValuesScan,
)

from ..errors import BinderError, NotSupportedError
from .aggregates import has_aggregates, plan_aggregate, resolve_group_keys
from .dialect import GraphTable
from .expressions import (
    INT64_MAX,
    Translator,
    checked_constant,
    conjuncts,
    literal_value,
    output_name,
)
from .parameters import bind_parameters, constant
from .scope import Relation, Scope
from .tables import Context, plan_named_table, plan_table_function

__all__ = ["Context", "plan_query", "bind_parameters", "constant"]

# bind_parameters and constant live in .parameters; re-exported here for callers of the planner.


class Block:
    """One query block being planned: its plan so far, the columns it outputs, its scope."""

    def __init__(self, ctx: Context, node: PlanNode, scope: Scope, columns: list[str]):
        self.ctx, self.node, self.scope, self.columns = ctx, node, scope, columns

    def translator(self, substitute=None) -> Translator:
        return Translator(self.scope.resolve, substitute, self._scalar_subquery, self._in_subquery)

    def _subplan(self, node: exp.Expression) -> PlanNode:
        query = node.this if isinstance(node, exp.Subquery) else node
        try:
            plan, names = plan_query(query, self.ctx)
        except BinderError:
            outer = {r.qualifier.lower() for r in self.scope.relations}
            if any(c.table.lower() in outer for c in query.find_all(exp.Column) if c.table):
                raise NotSupportedError(
                    "correlated subqueries (referring to an outer table) are not supported; "
                    "write a JOIN with GROUP BY instead") from None
            raise
        if len(names) != 1:
            raise BinderError(f"a subquery used as a value must return one column, "
                              f"this one returns {len(names)}: {query.sql()}")
        return plan

    def _scalar_subquery(self, node: exp.Expression) -> str:
        # Uncorrelated only: the subquery is planned on its own, so an outer column fails to bind.
        column = self.ctx.fresh("sq")
        sub = Rename(self._subplan(node), (column,))
        self.node = Join(self.node, sub, "single", text=node.sql())
        self.columns = self.columns + [column]
        return column

    def _in_subquery(self, left: exp.Expression, query: exp.Expression) -> str:
        sub = self._subplan(query)
        argument = self.translator()(left)
        column = self.ctx.fresh("inarg")
        self.node = Project(self.node, tuple(self.columns + [column]),
                            tuple([pc.field(c) for c in self.columns] + [argument]))
        output = self.ctx.fresh("in")
        self.node = MarkJoin(self.node, sub, column, output)
        self.columns = self.columns + [column, output]
        return output


# -- FROM ---------------------------------------------------------------------------------------
def _relation(item: exp.Expression, ctx: Context, taken: set[str]) -> Relation:
    alias_node = item.args.get("alias")
    alias = alias_node.name if alias_node is not None else ""
    if isinstance(item, GraphTable):
        from .pattern import plan_graph_table

        node, names = plan_graph_table(item, ctx)
        default = "graph_table"
    elif isinstance(item, exp.Table) and isinstance(item.this, exp.Func):
        node, names = plan_table_function(item.this, ctx)
        default = item.this.name if isinstance(item.this, exp.Anonymous) else item.this.sql_name()
    elif isinstance(item, exp.Table):
        node, names, default = plan_named_table(item, ctx)
    elif isinstance(item, exp.Subquery):
        node, names = plan_query(item.this, ctx)
        default = "subquery"
    elif isinstance(item, exp.Values):
        node, names = _values(item)
        default = "values"
    else:
        raise NotSupportedError(f"FROM {item.sql()} is not supported")
    columns_alias = alias_node.args.get("columns") if alias_node is not None else None
    if columns_alias:
        if len(columns_alias) > len(names):
            raise BinderError(f"{alias} has {len(names)} columns but {len(columns_alias)} "
                              "column aliases were given")
        names = [c.name for c in columns_alias] + names[len(columns_alias):]
    qualifier = alias or default
    full_name = "" if alias or not isinstance(item, exp.Table) or item.args.get("db") is None \
        else f"{item.args['db'].name}.{item.name}"
    if (full_name or qualifier).lower() in taken:
        raise BinderError(f"table name '{qualifier}' is used twice in FROM; give one an alias")
    taken.add((full_name or qualifier).lower())
    internal = []
    for name in names:
        column = f"{full_name or qualifier}.{name}"
        if column in internal:
            column = ctx.fresh(column + "#")
        internal.append(column)
    return Relation(Rename(node, tuple(internal)), qualifier, list(names), internal, full_name)


def _values(item: exp.Values) -> tuple[PlanNode, list[str]]:
    """``(VALUES (1, 'a'), (2, 'b'))``: constant rows, columns named col0, col1, ..."""
    rows = [[checked_constant(literal_value(v))
             for v in (t.expressions if isinstance(t, exp.Tuple) else [t])]
            for t in item.expressions]
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise BinderError("every row of VALUES must have the same number of values")
    names = [f"col{i}" for i in range(width)]
    try:
        table = pa.table({n: to_arrow([r[i] for r in rows]) for i, n in enumerate(names)})
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise BinderError("the values of a VALUES column must have one type") from None
    return ValuesScan("values", table), names


def _equi_key(cond: exp.Expression, scope: Scope, left: set[str], right: set[str]):
    """(left column, right column) if ``cond`` is ``l = r`` across the two sides, else None."""
    if not (isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Column)
            and isinstance(cond.expression, exp.Column)):
        return None
    a, b = scope.resolve(cond.this), scope.resolve(cond.expression)
    if a in left and b in right:
        return a, b
    if b in left and a in right:
        return b, a
    return None


def _join(block: Block, right: Relation, join: exp.Join, where: list[exp.Expression]) -> Block:
    scope = Scope(block.scope.relations + [right])
    left_cols, right_cols = set(block.columns), set(right.columns)
    side = (join.side or "").upper()
    kind = (join.kind or "").upper()
    on, using = join.args.get("on"), join.args.get("using")
    if kind in ("SEMI", "ANTI", "NATURAL") or join.args.get("method"):
        raise NotSupportedError(f"{join.sql().strip()}: this kind of join is not supported")
    conditions = conjuncts(on)
    if using:
        conditions = [exp.EQ(this=exp.column(u.name, block_qualifier(block, u.name)),
                             expression=exp.column(u.name, right.qualifier)) for u in using]
    elif on is None and not side:
        # FROM a, b WHERE ...: WHERE's conditions on these tables become the join's own, its
        # equalities hash keys and the rest filters applied chunk by chunk (predicate pushdown).
        taken = [c for c in where if _pushable(c, scope, right_cols)]
        for c in taken:
            where.remove(c)
        conditions = taken
    keys, residual = [], []
    for cond in conditions:
        key = _equi_key(cond, scope, left_cols, right_cols)
        (keys if key else residual).append(key or cond)
    translate = Translator(scope.resolve)
    residual_expr = None
    if residual:
        residual_expr = translate(exp.and_(*residual))
    join_kind = {"": "inner", "INNER": "inner", "LEFT": "left", "RIGHT": "right",
                 "FULL": "full"}[side or ("INNER" if kind in ("", "INNER", "OUTER") else "")]
    if not keys:
        if join_kind != "inner" and join_kind != "left":
            raise NotSupportedError(f"{side} JOIN needs an equality condition (a = b)")
        join_kind = "cross" if join_kind == "inner" else "left"
    if residual_expr is not None and join_kind in ("right", "full"):
        raise NotSupportedError(f"{side} JOIN supports only equality conditions joined by AND")
    text = " AND ".join(c.sql() for c in conditions)
    node = Join(block.node, right.node, join_kind, tuple(k[0] for k in keys),
                tuple(k[1] for k in keys), residual_expr, text)
    return Block(block.ctx, node, scope, block.columns + right.columns)


def _pushable(cond: exp.Expression, scope: Scope, right: set[str]) -> bool:
    """Whether a WHERE conjunct can move into an inner join: it names the new table, every
    column resolves here, and it holds no subquery or aggregate."""
    if cond.find(exp.Subquery, exp.Select, exp.AggFunc) is not None:
        return False
    try:
        resolved = {scope.resolve(c) for c in cond.find_all(exp.Column)}
    except BinderError:
        return False
    return bool(resolved & right)


def block_qualifier(block: Block, name: str) -> str:
    owners = [r.qualifier for r in block.scope.relations if name in r.names]
    if len(owners) != 1:
        raise BinderError(f"USING ({name}): the column must exist in exactly one table on the "
                          f"left, found {len(owners)}")
    return owners[0]


def _plan_from(select: exp.Select, ctx: Context, where: list[exp.Expression]) -> Block:
    source = select.args.get("from_") or select.args.get("from")
    if source is None:
        if select.args.get("joins"):
            raise BinderError("JOIN without FROM")
        return Block(ctx, SingleRow(), Scope([]), [])
    taken: set[str] = set()
    first = _relation(source.this, ctx, taken)
    block = Block(ctx, first.node, Scope([first]), list(first.columns))
    for join in select.args.get("joins") or []:
        block = _join(block, _relation(join.this, ctx, taken), join, where)
    return block


# -- query blocks -------------------------------------------------------------------------------
def _with(query: exp.Expression, ctx: Context) -> dict:
    saved = dict(ctx.ctes)
    with_ = query.args.get("with_") or query.args.get("with")
    if with_ is not None:
        if with_.args.get("recursive"):
            raise NotSupportedError("WITH RECURSIVE is not supported: use bfs(), khop() or "
                                    "GRAPH_TABLE (g MATCH (a)-[e]->{1,3}(b)) for traversals")
        for cte in with_.expressions:
            node, names = plan_query(cte.this, ctx)
            columns = cte.args["alias"].args.get("columns") if cte.args.get("alias") else None
            if columns:
                names = [c.name for c in columns] + names[len(columns):]
                node = Rename(node, tuple(names))
            ctx.ctes[cte.alias] = (node, names)
    return saved


def plan_query(query: exp.Expression, ctx: Context) -> tuple[PlanNode, list[str]]:
    """Plan a SELECT or set operation; returns the plan and its output column names."""
    saved = _with(query, ctx)
    try:
        if isinstance(query, exp.Subquery):
            node, names = plan_query(query.this, ctx)
            return _order_limit(query, node, names, ctx)
        if isinstance(query, exp.Union):
            return _plan_union(query, ctx)
        if isinstance(query, (exp.Intersect, exp.Except)):
            return _plan_set_operation(query, ctx)
        if not isinstance(query, exp.Select):
            raise NotSupportedError(f"{query.key.upper()} is not supported here")
        return _plan_select(query, ctx)
    finally:
        ctx.ctes = saved


def _plan_union(query: exp.Union, ctx: Context) -> tuple[PlanNode, list[str]]:
    inputs, names = [], None
    stack: list[exp.Expression] = [query]
    parts: list[exp.Expression] = []
    while stack:  # flatten left-deep UNION ALL chains without recursion
        q = stack.pop()
        if isinstance(q, exp.Union) and q is not query and (q.args.get("order") or q.args.get(
                "limit")):
            parts.append(q)
        elif isinstance(q, exp.Union) and (q is query or not q.args.get("distinct")) \
                and bool(q.args.get("distinct")) == bool(query.args.get("distinct")):
            stack.extend([q.expression, q.this])
        else:
            parts.append(q)
    for part in parts:
        node, part_names = plan_query(part, ctx)
        if names is None:
            names = part_names
        elif len(part_names) != len(names):
            raise BinderError(f"each side of UNION must have the same number of columns "
                              f"({len(names)} vs {len(part_names)})")
        inputs.append(node)
    node: PlanNode = UnionAll(tuple(inputs), tuple(names))
    if query.args.get("distinct"):
        node = Distinct(node)
    return _order_limit(query, node, names, ctx)


def _plan_set_operation(query: exp.Expression, ctx: Context) -> tuple[PlanNode, list[str]]:
    """INTERSECT / EXCEPT (set semantics; the ALL forms are not supported)."""
    kind = query.key.upper()
    if query.args.get("distinct") is False:
        raise NotSupportedError(f"{kind} ALL is not supported; use {kind}")
    left, names = plan_query(query.this, ctx)
    right, right_names = plan_query(query.expression, ctx)
    if len(right_names) != len(names):
        raise BinderError(f"each side of {kind} must have the same number of columns "
                          f"({len(names)} vs {len(right_names)})")
    node = SetOperation(left, right, kind.lower(), tuple(names))
    return _order_limit(query, node, names, ctx)


def _order_limit(query: exp.Expression, node: PlanNode, names: list[str],
                 ctx: Context) -> tuple[PlanNode, list[str]]:
    """ORDER BY / LIMIT on the output of a union or parenthesised query (by name or position)."""
    order = query.args.get("order")
    if order is not None:
        scope = Scope([Relation(node, "", names, names)])
        keys, firsts = [], []
        for ordered in order.expressions:
            key = ordered.this
            if isinstance(key, exp.Literal) and not key.is_string:
                column = _position(key, names, "ORDER BY")
            elif isinstance(key, exp.Column):
                column = scope.resolve(key)
            else:
                raise NotSupportedError("ORDER BY after UNION takes column names or positions")
            keys.append((column, "descending" if ordered.args.get("desc") else "ascending"))
            firsts.append(bool(ordered.args.get("nulls_first")))
        node = Sort(node, tuple(keys), tuple(firsts))
    return _limit(query, node), names


def _position(key: exp.Literal, names: list[str], clause: str) -> str:
    position = literal_value(key)
    if not isinstance(position, int) or not 1 <= position <= len(names):
        raise BinderError(f"{clause} position {key.sql()} is not in the select list "
                          f"(1..{len(names)})")
    return names[position - 1]


def _limit(query: exp.Expression, node: PlanNode) -> PlanNode:
    limit, offset = query.args.get("limit"), query.args.get("offset")
    if limit is None and offset is None:
        return node
    count = None if limit is None else _non_negative(limit.expression, "LIMIT")
    skip = 0 if offset is None else _non_negative(offset.expression, "OFFSET")
    return Limit(node, count, skip)


def _non_negative(node: exp.Expression, clause: str) -> int:
    value = constant(node, clause)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BinderError(f"{clause} must be a non-negative integer, got {node.sql()}")
    # No table has 2^63 rows: a larger LIMIT or OFFSET means the same as the largest int64,
    # which is what Arrow's slice takes.
    return min(value, INT64_MAX)


def _expand_aliases(node: exp.Expression, aliases: dict[str, exp.Expression],
                    in_scope) -> exp.Expression:
    """Select-list aliases used in WHERE/HAVING (``SELECT x * 2 AS y ... WHERE y > 3``), as
    DuckDB allows: a bare name that is not an input column stands for its expression.
    Subqueries keep their own names."""
    if isinstance(node, exp.Column) and not node.table and node.name in aliases \
            and not in_scope(node):
        return aliases[node.name].copy()
    if isinstance(node, (exp.Subquery, exp.Select)):
        return node
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            node.set(key, _expand_aliases(value, aliases, in_scope))
        elif isinstance(value, list):
            node.set(key, [_expand_aliases(v, aliases, in_scope) if isinstance(v, exp.Expression)
                           else v for v in value])
    return node


def _plan_select(select: exp.Select, ctx: Context) -> tuple[PlanNode, list[str]]:
    for clause in ("windows", "qualify", "laterals", "pivots"):
        if select.args.get(clause):
            raise NotSupportedError(f"{clause.upper()} is not supported")
    if any(isinstance(n, exp.Window) for n in select.expressions for n in n.walk()):
        raise NotSupportedError("window functions (OVER) are not supported")
    where = conjuncts(select.args["where"].this) if select.args.get("where") else []
    block = _plan_from(select, ctx, where)
    items = list(select.expressions)
    if not items:
        raise BinderError("SELECT needs at least one column")

    def in_scope(column: exp.Column) -> bool:
        try:
            block.scope.resolve(column)
            return True
        except BinderError:
            return False

    aliases = {i.alias: i.this for i in items if isinstance(i, exp.Alias)}
    if where:
        condition = _expand_aliases(exp.and_(*where) if len(where) > 1 else where[0], aliases,
                                    in_scope)
        predicate = block.translator()(condition)
        block.node = Filter(block.node, predicate, condition.sql())

    having = select.args.get("having")
    having_condition = _expand_aliases(having.this, aliases, in_scope) if having else None
    order = select.args.get("order")
    order_items = list(order.expressions) if order else []
    group = select.args.get("group")
    post_agg = [i for i in items if not isinstance(i, exp.Star)] + (
        [having_condition] if having else []) + [o.this for o in order_items]

    if group is not None or has_aggregates(post_agg):
        if any(isinstance(i, exp.Star) or (isinstance(i, exp.Column) and isinstance(
                i.this, exp.Star)) for i in items):
            raise BinderError("SELECT * cannot be combined with GROUP BY or aggregates")
        keys = resolve_group_keys(group, items, in_scope)
        translate = plan_aggregate(block, keys, post_agg)
        if having is not None:
            block.node = Filter(block.node, translate(having_condition), having_condition.sql())
    elif having is not None:
        raise BinderError("HAVING needs GROUP BY or an aggregate")
    else:
        translate = block.translator()

    names: list[str] = []
    exprs: list[pc.Expression] = []
    for item in items:
        if isinstance(item, exp.Star) or (isinstance(item, exp.Column)
                                         and isinstance(item.this, exp.Star)):
            qualifier = item.table if isinstance(item, exp.Column) else None
            for name, column in block.scope.star(qualifier or None):
                names.append(name)
                exprs.append(pc.field(column))
        else:
            names.append(output_name(item))
            exprs.append(translate(item))

    # Work under the output names where they are usable (EXPLAIN then reads naturally), else
    # under positional internal names; the final Rename gives the user's names either way.
    plain = len(set(names)) == len(names) and not any(n.startswith("__") for n in names)
    internal = list(names) if plain else [f"__c{i}" for i in range(len(names))]
    keys_out, firsts, hidden = [], [], []
    for ordered in order_items:
        key = ordered.this
        if isinstance(key, exp.Literal) and not key.is_string:
            _position(key, names, "ORDER BY")  # validates the range
            column = internal[literal_value(key) - 1]
        elif isinstance(key, exp.Column) and not key.table and names.count(key.name) == 1:
            # An output name wins over an input column of the same name (as in SQL).
            column = internal[names.index(key.name)]
        else:
            column = f"__h{len(hidden)}"
            hidden.append(translate(key))
        keys_out.append((column, "descending" if ordered.args.get("desc") else "ascending"))
        firsts.append(bool(ordered.args.get("nulls_first")))
    if hidden and select.args.get("distinct"):
        raise BinderError("with SELECT DISTINCT, ORDER BY expressions must appear in the "
                          "select list")
    node: PlanNode = Project(block.node, tuple(internal + [f"__h{i}" for i in range(len(hidden))]),
                             tuple(exprs + hidden))
    if select.args.get("distinct"):
        if select.args["distinct"].args.get("on"):
            raise NotSupportedError("DISTINCT ON is not supported")
        node = Distinct(node)
    if keys_out:
        node = Sort(node, tuple(keys_out), tuple(firsts),
                    tuple(o.this.sql() for o in order_items))
    node = _limit(select, node)
    if hidden:
        node = Project(node, tuple(internal), tuple(pc.field(c) for c in internal))
    return Rename(node, tuple(names)), names

