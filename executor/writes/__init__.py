"""Operators of statements that change the database: writes to a graph's tables (INSERT, DELETE,
UPDATE, as delta records: :mod:`graphdb.catalog.delta`) and definitions (CREATE GRAPH, DROP
GRAPH, loads, CREATE PROPERTY GRAPH).

Each is a physical node that runs itself (``run(runner, metrics)``), planned by
:mod:`graphdb.executor.physical.writes`. A write runs as one statement of the session's writer
(:mod:`graphdb.catalog.writer`, which the runner's ``writer_for`` gives): it takes the writer
lock, reads the graph's newest version (:class:`~.target.Target`), computes its input (the rows
to insert, or the rows a WHERE picks from that version) and adds its operations; outside BEGIN
... COMMIT the statement commits when it ends.
"""
