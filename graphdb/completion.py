"""Tab completion for the shell: keywords, functions, graph names, columns, dot commands.

Candidates are read from the live connection each time (graphs come and go), but only from
metadata: the catalog, the algorithm registry and graph table schemas, never from data.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

from prompt_toolkit.completion import Completer, Completion

from graphdb.executor.algorithms import REGISTRY

from .shell_commands import command_names

if TYPE_CHECKING:
    from .connection import Connection

__all__ = ["SqlCompleter", "DOT_COMMANDS"]

#: The dot commands, read from the shell's command table (never a list kept by hand).
DOT_COMMANDS = tuple(command_names())

_WORD = re.compile(r"[A-Za-z_.$][A-Za-z0-9_.$]*$")


class SqlCompleter(Completer):
    def __init__(self, con: "Connection", keywords: Iterable[str]):
        self.con = con
        self.keywords = sorted(set(keywords))

    def candidates(self, text_before: str) -> list[str]:
        """Completions for the word ending ``text_before`` (also used by the tests)."""
        match = _WORD.search(text_before)
        word = match.group(0) if match else ""
        if text_before.lstrip() == word and word.startswith("."):
            return [c for c in DOT_COMMANDS if c.startswith(word.lower())]
        graphs = self.con.graphs()
        if "." in word:
            head, _, tail = word.rpartition(".")
            graph = next((g for g in graphs if g.lower() == head.lower()), None)
            if graph is not None:
                return [f"{head}.{t}" for t in ("vertices", "edges") if t.startswith(tail.lower())]
            return []
        names = set(graphs) | set(REGISTRY) | set(self.con.table_functions)
        columns = {c.name for spec in REGISTRY.values() for c in spec.columns}
        try:  # stored tables and views, and their columns
            tables = self.con.catalog.tables_now()
            names |= set(tables.names()) | set(tables.view_names())
            columns |= {c.name for entry in tables.entries() for c in entry.columns}
        except Exception:  # a damaged entry: no names from it
            pass
        context = self.con.context()
        for graph in graphs:
            for table in ("vertices", "edges"):
                try:
                    columns.update(context.graph_columns(graph, table))
                except Exception:  # a graph dropped meanwhile: no columns to offer
                    pass
        lower = word.lower()
        out = [k for k in self.keywords if k.lower().startswith(lower)]
        out += sorted(n for n in names | columns if n.lower().startswith(lower))
        return out if word else []

    def get_completions(self, document, complete_event):
        before = document.text_before_cursor
        match = _WORD.search(before)
        word = match.group(0) if match else ""
        for candidate in self.candidates(before):
            yield Completion(candidate, start_position=-len(word))
