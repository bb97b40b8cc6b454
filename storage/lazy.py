"""Modules imported at their first use, for the parts of a statement that need them.

``import graphdb`` and a first ``SELECT 1`` need pyarrow, not ``pyarrow.compute``, whose import
builds a wrapper and docstring for each of its hundreds of functions (about a tenth of
graphdb's start-up); modules that call it now and then name it through :data:`pc`, which
imports it at the first attribute looked up and keeps each attribute once looked up.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["LazyModule", "pc"]


class LazyModule:
    """A module imported on its first attribute lookup (the import lock makes it safe from
    several threads)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        value = getattr(importlib.import_module(self._name), attribute)
        setattr(self, attribute, value)  # later lookups find it without this method
        return value

    def __repr__(self) -> str:
        return f"<lazily imported module {self._name!r}>"


#: ``pyarrow.compute``, imported at its first use.
pc: Any = LazyModule("pyarrow.compute")
