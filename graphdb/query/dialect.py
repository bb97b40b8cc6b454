"""The GraphSQL dialect of sqlglot.

Table functions with named arguments (``pagerank(g, damping => 0.85)``) already parse in the
base dialect, so this stays thin until the language needs syntax of its own (GRAPH_TABLE).
"""

from sqlglot.dialects.dialect import Dialect

__all__ = ["GraphSQL"]


class GraphSQL(Dialect):
    pass
