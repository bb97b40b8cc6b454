"""The query layer: SQL with graph table functions and SQL/PGQ patterns, planned for the executor.

Pipeline (one module per stage): :mod:`.parser` (sqlglot with the :mod:`.dialect` GraphSQL,
statements sqlglot does not know: SHOW, DROP GRAPH, RESET, EXPLAIN) -> :mod:`.planner` (binder and
planner in one pass: names resolved by :mod:`.scope` and :mod:`.tables`, expressions by
:mod:`.expressions`, GROUP BY by :mod:`.aggregates`, GRAPH_TABLE by :mod:`.pattern`) ->
:mod:`graphdb.executor.plan` dataclasses -> :class:`graphdb.executor.runner.Runner` (which asks
:mod:`graphdb.executor.cost` for each graph operator's variant) -> :mod:`.explain` for EXPLAIN.

The language, in short:

- ``SELECT ... FROM`` any of: an algorithm call ``bfs(g, 1, max_depth => 2)`` (every algorithm in
  ``graphdb.executor.algorithms.REGISTRY``, positional or ``name => value`` arguments), ``g.vertices``,
  ``g.edges``, ``settings()``, ``functions()``, a CTE, a subquery, or
  ``GRAPH_TABLE (g MATCH (a)-[e]->{1,3}(b) WHERE ... COLUMNS (...))``;
- joins (inner, left, right, full, cross, comma joins whose WHERE equalities become hash keys),
  WHERE, GROUP BY (count, count(DISTINCT), sum, avg, min, max, stddev, variance), HAVING,
  DISTINCT, ORDER BY (NULLs last unless NULLS FIRST), LIMIT/OFFSET, WITH, UNION [ALL],
  INTERSECT, EXCEPT, uncorrelated scalar and IN subqueries, CASE, CAST, LIKE, BETWEEN;
- parameters ``?`` and ``$name``; SHOW GRAPHS | FUNCTIONS | SETTINGS; DESCRIBE g | g.edges |
  SELECT ...; DROP GRAPH [IF EXISTS] g; SET/RESET device, memory_limit, threads;
  EXPLAIN [ANALYZE].

Patterns: one linear path per MATCH; ``-[e]->``, ``<-[e]-``, ``-[e]-`` (either direction),
``->``; ``{m,n}`` quantifiers with reachability semantics (each (start, end) pair once).
"""
