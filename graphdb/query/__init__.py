"""The query layer: SQL with graph table functions and SQL/PGQ patterns, planned for the executor.

Pipeline (one module per stage): :mod:`.parser` (sqlglot with the :mod:`.dialect` GraphSQL, which
is DuckDB's SQL plus ``GRAPH_TABLE``, and graphdb's own statements, :mod:`.grammar`: SHOW, DROP
GRAPH, CREATE [PROPERTY] GRAPH, COPY, RESET, EXPLAIN, ...; a statement's kind is the class of
its tree) -> the handler of that kind (:mod:`.statements`, one module per family) ->
:mod:`.binder` (graph function calls, ``g.vertices``/``g.edges``/``g.adjacency``,
``GRAPH_TABLE`` (:mod:`.pattern`), built-in table functions and parameters (:mod:`.parameters`)
become graph operators and relation names; the rest of the text is left as the user wrote it)
-> :mod:`graphdb.executor.plan` (graph operators under one ``RelationalQuery``) -> the physical
planner and runner, which run the graph operators and hand their Arrow results to DuckDB for the
relational part -> :mod:`.explain` for EXPLAIN, :mod:`.diagnostics` for DuckDB's errors in
graphdb's terms.

The language, in short:

- everything DuckDB's SQL has: joins of every kind, subqueries (correlated too), EXISTS, CTEs
  (recursive too), set operations, GROUP BY / HAVING / QUALIFY, window functions, dates,
  timestamps and intervals, casts, string and list functions, ``string_agg``, ``median``,
  ``quantile_cont``, NULL with three-valued logic;
- graph table functions anywhere a table is: ``bfs(g, 1, max_depth => 2)`` (every algorithm in
  ``graphdb.executor.algorithms.REGISTRY``, positional or ``name => value`` arguments; an
  argument may be an expression or a ``(SELECT ...)``), and per row of the tables before it,
  ``FROM t, LATERAL khop(g, t.id, 2)``, run as one multi-source operator;
- ``g.vertices``, ``g.edges`` (each edge once, as loaded), ``g.adjacency`` (both directions of
  an undirected graph's edges), ``settings()``, ``functions()``, ``graphs()``,
  ``buffer_stats()``, and ``GRAPH_TABLE (g MATCH (a)-[e]->{1,3}(b) WHERE ... COLUMNS (...))``;
- parameters ``?`` (numbered by their place in the text), ``$1`` and ``$name``; ``x IN ?``
  takes a list or tuple;
- SHOW GRAPHS | FUNCTIONS | SETTINGS; DESCRIBE g | g.edges | SELECT ...; DROP GRAPH [IF EXISTS]
  g; SET/RESET device, memory_limit, threads; EXPLAIN [ANALYZE].

Patterns: one linear path per MATCH; ``-[e]->``, ``<-[e]-``, ``-[e]-`` (either direction),
``->``; ``{m,n}`` quantifiers with reachability semantics (each (start, end) pair once).
"""
