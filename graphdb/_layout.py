"""Where the inner layers come from: ``graphdb.storage``, ``graphdb.catalog``, ``graphdb.executor``.

The repository keeps the four layers as top-level folders (``storage/``, ``catalog/``,
``executor/`` beside ``graphdb/``); an install maps them under ``graphdb`` (the build's
package-dir), so nothing but ``graphdb`` lands in site-packages and a user's own ``catalog.py``
or ``storage/`` can never shadow them. An installed wheel holds them inside this package and an
editable install has setuptools' finder for them; a bare source checkout (``python -m graphdb``
or ``pytest`` in a clone that was never installed) has neither. Whenever ``graphdb`` itself was
imported from a checkout, this module maps the three names to that checkout's sibling folders,
ahead of any other finder, so the layers always come from the same tree as the front end (a
second worktree never picks up the first one's layers through an editable install).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from pathlib import Path

__all__ = ["INNER_LAYERS"]

INNER_LAYERS = ("storage", "catalog", "executor")
_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent


class _CheckoutLayers(importlib.abc.MetaPathFinder):
    """Finds ``graphdb.<layer>`` in the checkout's ``<layer>/`` folder (nothing else)."""

    def find_spec(self, fullname, path=None, target=None):
        prefix, _, layer = fullname.partition(".")
        if prefix != "graphdb" or layer not in INNER_LAYERS:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [str(_CHECKOUT)])


def _install() -> None:
    if (_PACKAGE / "storage").is_dir():  # an installed wheel: the layers are inside graphdb/
        return
    if not all((_CHECKOUT / layer / "__init__.py").is_file() for layer in INNER_LAYERS):
        return
    if not any(isinstance(f, _CheckoutLayers) for f in sys.meta_path):
        sys.meta_path.insert(0, _CheckoutLayers())


_install()
