"""The web explorer (``graphdb serve``, ``con.serve()``, the shell's ``.serve``) and the HTML
that results and graphs show in notebooks.

The server (:mod:`.server`, :mod:`.app`) is Starlette on uvicorn; the page is static files
(:file:`static/`) with Cytoscape.js and CodeMirror shipped as package data, so nothing is
loaded from the network. Statements run on worker connections of the server's own
(:mod:`.workers`), read-only unless ``--write``.
"""

from __future__ import annotations

__all__ = ["Server", "serve"]


def __getattr__(name: str):
    # The server's modules import Starlette and uvicorn: only when asked for.
    if name in __all__:
        from . import server

        return getattr(server, name)
    raise AttributeError(name)
