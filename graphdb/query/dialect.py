"""The GraphSQL dialect of sqlglot: DuckDB's SQL plus the SQL/PGQ ``GRAPH_TABLE`` table expression.

The relational part of every query runs on DuckDB, so the dialect is sqlglot's DuckDB dialect:
what parses here is what DuckDB will run (``//``, ``::``, ``QUALIFY``, ``GROUP BY ALL``, list
literals, ...). Table functions with named arguments (``pagerank(g, damping => 0.85)``) parse in
it as they are. What it lacks is the SQL:2023 property-graph query::

    GRAPH_TABLE ( g MATCH (a)-[e]->(b) WHERE a.id = 7 COLUMNS (b.id AS friend) ) [AS alias]

The dialect adds it by overriding one grammar rule, ``_parse_table``, which looks for the
``GRAPH_TABLE (`` prefix before handing over to sqlglot; the pattern itself is parsed token by
token here and its WHERE and COLUMNS clauses by sqlglot's own expression rules. The result is a
:class:`GraphTable` node holding :class:`NodePattern` and :class:`EdgePattern` nodes, so the
binder sees an ordinary AST.

graphdb's own statements (SHOW GRAPHS, DROP GRAPH, CREATE [PROPERTY] GRAPH, COPY, EXPLAIN, ...)
parse to nodes of their own kinds too (:mod:`.grammar`).

The binder rewrites a query by replacing pieces of its text (a graph function call by the name
of its result, a ``?`` by a value), so the parser records where some nodes are:
``node.meta["span"] = (first, last)`` character offsets (inclusive) for every FROM item
(:meth:`_parse_table`), every select-list item, every placeholder, every function call and every
operand of AND (and so every function argument).
"""

from __future__ import annotations

from sqlglot import exp, generator
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.tokens import TokenType

from .grammar import StatementGrammar

__all__ = ["GraphSQL", "GraphTable", "NodePattern", "EdgePattern", "SubgraphRef", "UNBOUNDED",
           "span"]


#: SQL/PGQ path modes (restrictors) this subset does not implement (WALK is the default).
_RESTRICTORS = {"TRAIL", "ACYCLIC", "SIMPLE"}


def span(node: exp.Expression) -> tuple[int, int] | None:
    """``(first, last)`` character offsets of ``node`` in the statement text, if recorded."""
    meta = node._meta
    return None if meta is None else meta.get("span")


class NodePattern(exp.Expression):
    """``(a)``, ``(a:Person|City WHERE a.age > 30)``; ``this`` is the variable name (may be
    None), ``labels`` the label expression's text (``|`` or, ``&`` and, ``!`` not, ``%`` any)."""

    arg_types = {"this": False, "where": False, "labels": False}


class EdgePattern(exp.Expression):
    """``-[e]->``, ``<-[e]-``, ``-[e]-`` with an optional ``{m,n}`` quantifier (``*``, ``+``
    and ``{m,}`` leave ``high`` None: unbounded), or a quantified path pattern of one edge,
    ``((x)-[e]->(y) WHERE cond){m,n}`` (``source``, ``target`` are the inner vertex patterns,
    ``group`` the condition of the group).

    ``direction`` is 'out', 'in' or 'both'; ``low``/``high`` are the hop bounds (1, 1 unless
    quantified; ``high`` is :data:`UNBOUNDED` for ``*``, ``+``, ``{m,}``).
    """

    arg_types = {"this": False, "direction": True, "low": False, "high": False, "where": False,
                 "source": False, "target": False, "group": False, "labels": False}


#: ``high`` of an unbounded quantifier (an AST argument set to None would be dropped).
UNBOUNDED = -1


class GraphTable(exp.Expression):
    """``GRAPH_TABLE (graph MATCH [p =] [prefix] pattern [, ...] [WHERE cond] [COLUMNS (...)])``.

    ``pattern`` alternates NodePattern, EdgePattern, NodePattern, ...; ``path`` is the path
    variable; ``prefix`` the path search prefix ('any', 'any_shortest', 'all_shortest',
    'shortest') with ``k`` (ANY k, SHORTEST k). ``also``: the further comma-separated path
    patterns of the MATCH, each a GraphTable of its own pattern (path, prefix) without WHERE
    or COLUMNS.
    """

    arg_types = {"this": True, "pattern": True, "where": False, "columns": False, "alias": False,
                 "path": False, "prefix": False, "k": False, "also": False}

    @property
    def alias(self) -> str:
        alias = self.args.get("alias")
        return alias.name if alias is not None else ""


class SubgraphRef(exp.Expression):
    """``GRAPH g [LABELS (l, ...)] [WHERE condition]`` as a graph function's graph: the part of
    ``g`` kept by the labels (of a property graph) and the condition (``e.<property>`` of edges,
    ``v.<property>`` of vertices)."""

    arg_types = {"this": True, "where": False, "labels": False}


class GraphSQLParser(StatementGrammar, DuckDB.Parser):
    def _spanned(self, parse):
        """Run ``parse()`` and record the span of the tokens it consumed on its result."""
        first = self._index
        node = parse()
        if isinstance(node, exp.Expression) and self._index > first:
            node.meta["span"] = (self._tokens[first].start, self._tokens[self._index - 1].end)
        return node

    def _graph_table_words(self) -> int:
        """How many words the ``GRAPH_TABLE`` (or DuckPGQ's ``GRAPH TABLE``) before a ``(`` at
        the parser's place has: 0 when there is none."""
        ahead = self._tokens[self._index:self._index + 3]
        words = [t.text.upper() for t in ahead]
        if len(ahead) >= 2 and words[0] == "GRAPH_TABLE" and \
                ahead[1].token_type == TokenType.L_PAREN:
            return 1
        if len(ahead) == 3 and words[:2] == ["GRAPH", "TABLE"] and \
                ahead[2].token_type == TokenType.L_PAREN:
            return 2
        return 0

    def _parse_table(self, *args, **kwargs):
        words = self._graph_table_words() if self._curr else 0
        if words:
            first = self._index
            self._advance(words + 1)
            table = self._parse_graph_table()
            self._match_r_paren()
            alias = self._parse_table_alias()
            if alias is not None:
                table.set("alias", alias)
            table.meta["span"] = (self._tokens[first].start, self._tokens[self._index - 1].end)
            return table
        return self._spanned(lambda: super(GraphSQLParser, self)._parse_table(*args, **kwargs))

    def _parse_schema(self, this=None):
        # INSERT INTO t (FROM s): a query in parentheses, not t's column list
        if self._curr and self._curr.token_type == TokenType.L_PAREN and self._next and \
                self._next.token_type == TokenType.FROM:
            return this
        return super()._parse_schema(this=this)

    def _parse_function_args(self, alias: bool = False):
        return self._parse_csv(lambda: self._parse_subgraph()
                               or self._parse_lambda(alias=alias))

    def _parse_subgraph(self):
        """``GRAPH g [WHERE condition]`` (a function argument), else None."""
        if not (self._curr and self._curr.text.upper() == "GRAPH" and self._next
                and self._next.token_type in (TokenType.VAR, TokenType.STRING)
                and self._next.token_type not in self.RESERVED_TOKENS):
            return None
        first = self._index
        self._advance()
        name = self._parse_id_var(any_token=False)
        labels = None
        if self._curr and self._curr.text.upper() == "LABELS":
            self._advance()
            labels = self._parse_wrapped_csv(lambda: self._parse_id_var(any_token=True))
        where = self._parse_assignment() if self._match(TokenType.WHERE) else None
        node = SubgraphRef(this=name, where=where, labels=labels)
        node.meta["span"] = (self._tokens[first].start, self._tokens[self._index - 1].end)
        return node

    def _parse_projections(self):
        return self._parse_csv(lambda: self._spanned(self._parse_expression)), None

    def _parse_placeholder(self):
        return self._spanned(super()._parse_placeholder)

    def _parse_function(self, *args, **kwargs):
        return self._spanned(lambda: super(GraphSQLParser, self)._parse_function(*args,
                                                                                 **kwargs))

    def _parse_equality(self, parse_is: bool = True):
        # the operands of AND and the arguments of calls: the pieces the binder moves around
        return self._spanned(lambda: super(GraphSQLParser, self)._parse_equality(parse_is))

    def _parse_graph_table(self) -> GraphTable:
        graph = self._parse_id_var(any_token=False)
        if graph is None:
            self.raise_error("GRAPH_TABLE needs a graph name")
        if not self._match_text_seq("MATCH"):
            self.raise_error("expected MATCH after the graph name in GRAPH_TABLE")
        first = self._parse_path_pattern(graph)
        also = []
        while self._match(TokenType.COMMA):
            also.append(self._parse_path_pattern(graph))
        where = self._parse_assignment() if self._match(TokenType.WHERE) else None
        columns = None
        if self._match_text_seq("COLUMNS"):
            columns = self._parse_wrapped_csv(self._parse_expression)
        conditions = [p.args.get("where") for p in [first, *also] if p.args.get("where")]
        for p in also:
            p.set("where", None)
        if where is not None:
            conditions.append(where)
        first.set("where", exp.and_(*conditions) if conditions else None)
        first.set("columns", columns)
        if also:
            first.set("also", also)
        return first

    def _parse_path_pattern(self, graph) -> GraphTable:
        """``[p =] [prefix] (a)-[e]->(b)...``: one path pattern of a MATCH."""
        path = None
        if self._curr and self._next and self._next.token_type == TokenType.EQ and \
                self._curr.token_type in (TokenType.VAR, TokenType.IDENTIFIER):
            path = self._parse_id_var(any_token=False)
            self._match(TokenType.EQ)
        prefix, k = self._parse_path_prefix()
        conditions: list[exp.Expression] = []
        pattern = self._parse_elements(conditions)
        table = GraphTable(this=graph.copy(), pattern=pattern, path=path, prefix=prefix, k=k)
        if conditions:
            table.set("where", exp.and_(*conditions))
        return table

    def _parse_elements(self, conditions: list) -> list:
        """``(a)-[e]->(b)...``, where a parenthesized path pattern without a quantifier
        (``((a)->(b) [WHERE cond])``, PostgreSQL's regression tests write one) is its elements,
        its WHERE added to ``conditions``."""
        pattern = self._parse_path_group(conditions) or [self._parse_node_pattern()]
        while self._curr and (self._curr.token_type in (TokenType.DASH, TokenType.ARROW,
                                                        TokenType.LT, TokenType.LR_ARROW)
                              or self._quantified_path_ahead()):
            if self._quantified_path_ahead():
                pattern.append(self._parse_quantified_path())
                pattern.append(self._parse_node_pattern())
                continue
            pattern.append(self._parse_edge_pattern())
            group = self._parse_path_group(conditions)
            pattern.extend(group or [self._parse_node_pattern()])
        return pattern

    def _parse_path_group(self, conditions: list) -> list | None:
        """The elements of ``((a)-...-(b) [WHERE cond])`` here when no quantifier follows it;
        None (nothing read) otherwise."""
        if not self._quantified_path_ahead():
            return None
        start = self._index
        self._advance()
        inner: list[exp.Expression] = []
        pattern = self._parse_elements(inner)
        if self._match(TokenType.WHERE):
            inner.append(self._parse_assignment())
        if not self._match(TokenType.R_PAREN) or (self._curr is not None and self._curr.token_type
                                                   in (TokenType.L_BRACE, TokenType.PLUS,
                                                       TokenType.STAR, TokenType.PLACEHOLDER)):
            self._retreat(start)  # a quantified path pattern, read as one
            return None
        conditions.extend(inner)
        return pattern

    def _parse_path_prefix(self) -> tuple[str | None, int | None]:
        """``ANY SHORTEST``, ``ALL SHORTEST``, ``ANY [k]``, ``SHORTEST k``, then an optional
        ``WALK`` [PATH|PATHS]: (prefix, k)."""
        word = self._curr.text.upper() if self._curr else ""
        prefix, k = None, None
        if word in ("ANY", "ALL", "SHORTEST"):
            self._advance()
            after = self._curr.text.upper() if self._curr else ""
            if word == "ALL":
                if after != "SHORTEST":
                    self.raise_error("ALL takes SHORTEST (ALL SHORTEST); every walk is the "
                                     "default without a prefix")
                self._advance()
                prefix = "all_shortest"
            elif word == "ANY" and after == "SHORTEST":
                self._advance()
                prefix = "any_shortest"
            else:
                if self._curr and self._curr.token_type == TokenType.NUMBER:
                    k = int(self._curr.text)
                    self._advance()
                elif word == "SHORTEST":
                    self.raise_error("SHORTEST takes a count (SHORTEST 3), or write ANY SHORTEST")
                prefix = "any" if word == "ANY" else "shortest"
                if k is not None and k < 1:
                    self.raise_error(f"{word} {k}: the number of paths must be at least 1")
        mode = self._curr.text.upper() if self._curr else ""
        if mode in _RESTRICTORS:
            self.raise_error(f"path mode {mode} is not supported: paths are walks (WALK); "
                             "ANY SHORTEST and ALL SHORTEST paths have no repeated vertices")
        if mode == "WALK":
            self._advance()
            if self._curr and self._curr.text.upper() in ("PATH", "PATHS"):
                self._advance()
        return prefix, k

    def _quantified_path_ahead(self) -> bool:
        """Whether ``((`` starts a quantified path pattern here."""
        return bool(self._curr and self._next and self._curr.token_type == TokenType.L_PAREN
                    and self._next.token_type == TokenType.L_PAREN)

    def _parse_quantified_path(self) -> EdgePattern:
        """``((x)-[e]->(y) [WHERE cond]){m,n}``: one edge between two vertex patterns, every
        step of it meeting the conditions."""
        self._match(TokenType.L_PAREN)
        source = self._parse_node_pattern()
        if self._curr is None or self._curr.token_type not in (TokenType.DASH, TokenType.ARROW,
                                                               TokenType.LT):
            self.raise_error("a quantified path pattern holds one edge: ((x)-[e]->(y)){m,n}")
        edge = self._parse_edge_pattern(quantified=False)
        target = self._parse_node_pattern()
        group = self._parse_assignment() if self._match(TokenType.WHERE) else None
        if not self._match(TokenType.R_PAREN):
            self.raise_error("a quantified path pattern holds one edge: ((x)-[e]->(y)){m,n}")
        edge.set("source", source)
        edge.set("target", target)
        edge.set("group", group)
        before = self._index
        self._edge_quantifier(edge)
        if self._index == before:
            self.raise_error("a parenthesized path pattern needs a quantifier: ((x)-[e]->(y)){1,3}")
        return edge

    def _parse_node_pattern(self) -> NodePattern:
        if not self._match(TokenType.L_PAREN):
            self.raise_error("expected a vertex pattern such as (a)")
        var = None
        if self._curr and self._curr.token_type not in (TokenType.R_PAREN, TokenType.COLON,
                                                        TokenType.IS, TokenType.WHERE):
            var = self._parse_id_var(any_token=False)
        labels = self._parse_labels()
        where = self._parse_assignment() if self._match(TokenType.WHERE) else None
        self._match_r_paren()
        return NodePattern(this=var, where=where, labels=labels)

    def _parse_labels(self) -> str | None:
        """The label expression after ``:`` (or ``IS``), as text: names, ``|``, ``&``, ``!``,
        ``%`` and parentheses, up to WHERE or the pattern's closing bracket."""
        if not (self._match(TokenType.COLON) or self._match(TokenType.IS)):
            return None
        parts, depth = [], 0
        while self._curr is not None:
            kind = self._curr.token_type
            if kind in (TokenType.WHERE, TokenType.R_BRACKET) or (
                    kind == TokenType.R_PAREN and depth == 0):
                break
            if kind == TokenType.L_PAREN:
                depth += 1
            elif kind == TokenType.R_PAREN:
                depth -= 1
            parts.append(self._curr.text)
            self._advance()
        if not parts:
            self.raise_error("a label expression follows ':' (e.g. (a:Person|City))")
        return " ".join(parts)

    def _parse_edge_pattern(self, quantified: bool = True) -> EdgePattern:
        # Forms: -[e]->  <-[e]-  -[e]-  <-[e]->  ->  <-  -  <->   (brackets optional)
        if self._match(TokenType.LR_ARROW):
            edge = EdgePattern(direction="both")
            return self._edge_quantifier(edge) if quantified else edge
        left_arrow = bool(self._match(TokenType.LT))
        if left_arrow and self._curr and self._curr.start != self._prev.end + 1:
            self.raise_error("'<-' is one symbol: write it without a space")  # not '< -'
        if self._match(TokenType.ARROW):  # '->' with no brackets; '<->' either direction
            edge = EdgePattern(direction="both" if left_arrow else "out")
            return self._edge_quantifier(edge) if quantified else edge
        if not self._match(TokenType.DASH):
            self.raise_error("expected an edge pattern such as -[e]->")
        var, where, labels = None, None, None
        brackets = bool(self._match(TokenType.L_BRACKET))
        if brackets:
            if self._curr and self._curr.token_type not in (TokenType.R_BRACKET, TokenType.COLON,
                                                            TokenType.IS, TokenType.WHERE):
                var = self._parse_id_var(any_token=False)
            labels = self._parse_labels()
            if self._match(TokenType.WHERE):
                where = self._parse_assignment()
            self._match(TokenType.R_BRACKET) or self.raise_error("expected ']'")
            if self._match(TokenType.ARROW):
                right_arrow = True
            elif self._match(TokenType.DASH):
                right_arrow = bool(self._match(TokenType.GT))
            else:
                self.raise_error("expected '->' or '-' after ']'")
                right_arrow = False
        else:
            right_arrow = False  # a bare '-' (or '<-')
        # <-[e]-> is an edge pointing either way (SQL/PGQ's "left or right"), as -[e]- is
        direction = "in" if left_arrow and not right_arrow else \
            "out" if right_arrow and not left_arrow else "both"
        edge = EdgePattern(this=var, direction=direction, where=where,
                           labels=labels if brackets else None)
        if not quantified:
            edge.set("low", 1)
            edge.set("high", 1)
            return edge
        return self._edge_quantifier(edge)

    def _edge_quantifier(self, edge: EdgePattern) -> EdgePattern:
        low = high = 1
        if self._match(TokenType.L_BRACE):
            low = self._quantity(0)
            if self._match(TokenType.COMMA):
                high = self._quantity(None)
            else:
                high = low
            self._match(TokenType.R_BRACE) or self.raise_error("expected '}' after the quantifier")
        elif self._match(TokenType.PLUS):
            low, high = 1, None
        elif self._match(TokenType.STAR):
            low, high = 0, None
        elif self._match(TokenType.PLACEHOLDER):  # '?': zero or one
            low, high = 0, 1
        edge.set("low", low)
        edge.set("high", UNBOUNDED if high is None else high)
        return edge

    def _quantity(self, empty):
        if self._curr and self._curr.token_type == TokenType.NUMBER:
            value = int(self._curr.text)
            self._advance()
            return value
        return empty


class GraphSQLTokenizer(DuckDB.Tokenizer):
    # SETTINGS is a ClickHouse keyword in the base tokenizer; here it names a table function.
    # '?::' is another dialect's operator; here it is a parameter and a cast (?::DATE).
    # EXPLAIN, RESET and VACUUM would make the rest of the statement one string: they are
    # statements of graphdb's own grammar (.grammar), read token by token.
    KEYWORDS = {k: v for k, v in DuckDB.Tokenizer.KEYWORDS.items()
                if k not in ("SETTINGS", "?::", "EXPLAIN", "RESET", "VACUUM")}


def _graph_table_sql(gen, node: GraphTable) -> str:
    pattern = ", ".join("".join(gen.sql(part) for part in item.args["pattern"])
                        for item in [node, *(node.args.get("also") or [])])
    where = f" WHERE {gen.sql(node.args['where'])}" if node.args.get("where") else ""
    columns = node.args.get("columns")
    columns = f" COLUMNS ({', '.join(gen.sql(c) for c in columns)})" if columns else ""
    alias = f" AS {node.alias}" if node.alias else ""
    return f"GRAPH_TABLE ({gen.sql(node.this)} MATCH {pattern}{where}{columns}){alias}"


def _node_pattern_sql(gen, node: NodePattern) -> str:
    where = f" WHERE {gen.sql(node.args['where'])}" if node.args.get("where") else ""
    labels = f":{node.args['labels']}" if node.args.get("labels") else ""
    return f"({gen.sql(node.this) if node.this else ''}{labels}{where})"


def _edge_pattern_sql(gen, node: EdgePattern) -> str:
    where = f" WHERE {gen.sql(node.args['where'])}" if node.args.get("where") else ""
    labels = f":{node.args['labels']}" if node.args.get("labels") else ""
    inner = f"[{gen.sql(node.this) if node.this else ''}{labels}{where}]"
    low, high = node.args.get("low", 1), node.args.get("high", 1)
    quantifier = "" if (low, high) == (1, 1) else f"{{{low},{'' if high == UNBOUNDED else high}}}"
    left, right = {"out": ("-", "->"), "in": ("<-", "-"), "both": ("-", "-")}[
        node.args["direction"]]
    return f"{left}{inner}{right}{quantifier}"


def _subgraph_sql(gen, node: SubgraphRef) -> str:
    where = f" WHERE {gen.sql(node.args['where'])}" if node.args.get("where") else ""
    labels = node.args.get("labels")
    labels = f" LABELS ({', '.join(gen.sql(n) for n in labels)})" if labels else ""
    return f"GRAPH {gen.sql(node.this)}{labels}{where}"


# Printable by any generator, so error messages and column names can quote a pattern: the base
# generator is what ``node.sql()`` uses, and these classes exist only in this dialect's trees.
for _generator in (generator.Generator, DuckDB.Generator):
    _generator.TRANSFORMS = {
        **_generator.TRANSFORMS, GraphTable: _graph_table_sql,
        NodePattern: _node_pattern_sql, EdgePattern: _edge_pattern_sql,
        SubgraphRef: _subgraph_sql}


class GraphSQL(DuckDB):
    Tokenizer = GraphSQLTokenizer
    Parser = GraphSQLParser

