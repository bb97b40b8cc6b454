"""Every public method of the Python API has a docstring with an example, and the examples run
(doctest) and print what they say."""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import graphdb

CLASSES = [graphdb.Connection, graphdb.Result, graphdb.Cursor, graphdb.GraphHandle]
MODULES = ["graphdb", "graphdb.connection", "graphdb.result", "graphdb.graph", "graphdb.types"]


def _public(cls):
    for name, member in inspect.getmembers(cls):
        if name.startswith("_"):
            continue
        if callable(member) or isinstance(inspect.getattr_static(cls, name), property):
            yield name, member


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_public_method_has_an_example(cls):
    missing = [name for name, member in _public(cls)
               if ">>>" not in (inspect.getdoc(member) or "")]
    assert missing == []


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_run(name):
    pytest.importorskip("pandas")
    pytest.importorskip("polars")
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS
                                        | doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0
