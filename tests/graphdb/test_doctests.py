"""The public API's examples run as written (doctests of every front-end module that has any)."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import graphdb


def _modules_with_examples() -> list[str]:
    names = ["graphdb"] + [m.name for m in pkgutil.walk_packages(graphdb.__path__, "graphdb.")
                           if not m.name.endswith("__main__")
                           and not m.name.startswith(("graphdb.storage", "graphdb.catalog",
                                                      "graphdb.executor"))]
    found = []
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional dependency (the shell's prompt_toolkit, ...)
            continue
        if doctest.DocTestFinder().find(module) and any(
                t.examples for t in doctest.DocTestFinder().find(module)):
            found.append(name)
    return found


MODULES = _modules_with_examples()


def test_the_public_api_has_examples():
    assert {"graphdb", "graphdb.connection", "graphdb.graph"} <= set(MODULES)


#: examples that need an optional package (``.pl()`` polars, ``.df()`` pandas) run where it is
#: installed (the dev extra has both; the GPU machine has no polars)
OPTIONAL = {".pl()": "polars", ".df()": "pandas"}


def _runnable(example: doctest.Example) -> bool:
    return all(importlib.util.find_spec(module) is not None
               for call, module in OPTIONAL.items() if call in example.source)


@pytest.mark.parametrize("name", MODULES)
def test_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = 0
    for test in doctest.DocTestFinder().find(importlib.import_module(name)):
        test.examples = [e for e in test.examples if _runnable(e)]
        ran += len(test.examples)
        runner.run(test)
    assert runner.failures == 0
    assert ran > 0


@pytest.mark.parametrize("cls", [graphdb.Connection, graphdb.Result, graphdb.Cursor,
                                 graphdb.GraphHandle], ids=lambda c: c.__name__)
def test_every_public_method_has_an_example(cls):
    import inspect

    missing = [name for name, member in inspect.getmembers(cls)
               if not name.startswith("_")
               and (callable(member) or isinstance(inspect.getattr_static(cls, name), property))
               and ">>>" not in (inspect.getdoc(member) or "")]
    assert missing == []
