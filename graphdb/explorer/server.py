"""``graphdb serve``: the explorer's server, from the command line or from Python.

    graphdb serve DB [--port 8750] [--host 127.0.0.1] [--write] [--no-browser] [--workers N]

``Server`` runs it in a thread (``con.serve()``, the shell's ``.serve``, tests); the command
runs it in the foreground until Ctrl-C. It binds 127.0.0.1 (the next free port from 8750) and
prints the address to open, with a random token as Jupyter does; a page without the token is
refused.
"""

from __future__ import annotations

import errno
import os
import secrets
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError, OperationalError

__all__ = ["Server", "serve", "DEFAULT_PORT", "missing_dependencies"]

#: The first port tried (then the next ones, as Jupyter does).
DEFAULT_PORT = 8750
_PORT_TRIES = 20
#: Bytes of results the server keeps for paging, all tabs together.
RESULT_BUDGET = 1 << 30
_NEEDED = ("starlette", "uvicorn", "websockets")


def missing_dependencies() -> list[str]:
    """The packages the explorer needs that are not installed."""
    import importlib.util

    return [name for name in _NEEDED if importlib.util.find_spec(name) is None]


def _require() -> None:
    missing = missing_dependencies()
    if missing:
        raise OperationalError(
            f"the explorer needs {', '.join(missing)}, which graphdb depends on but this "
            f"environment lacks; install them with: pip install {' '.join(missing)}")


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``port`` or, taken, one of the next ones (0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    tries = 1 if port == 0 else _PORT_TRIES
    for candidate in range(port, port + tries):
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host.strip("[]"), candidate))
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE and candidate + 1 < port + tries:
                continue
            raise OperationalError(f"cannot listen on {host}:{candidate}: "
                                   f"{exc.strerror or exc}") from None
        sock.listen(128)
        sock.set_inheritable(True)
        return sock
    raise OperationalError(f"ports {port} to {port + tries - 1} are taken; "
                           "choose another with --port")


class Server:
    """The explorer on database ``database`` (a path, or a Connection whose database it
    opens again): ``start()`` runs it in a thread, ``stop()`` ends it, ``url`` is the address
    to open (with its token). Also a context manager.

    ``write``: allow statements that change the database, and files (COPY, loads);
    ``workers``: connections running statements at once; ``token``: the token the pages need
    (default: a random one); ``connect_options``: for the workers' ``graphdb.connect`` (device,
    memory_limit, ...).
    """

    def __init__(self, database: Any, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 write: bool = False, workers: int = 2, token: str | None = None,
                 result_budget: int = RESULT_BUDGET, **connect_options):
        _require()
        path = getattr(database, "path", database)
        if path is None:
            raise InvalidInputError("graphdb serve needs a database directory")
        self.path = Path(path)
        from graphdb.storage.env import MARKER

        if not (self.path / MARKER).exists():
            raise InvalidInputError(f"'{self.path}' is not a graphdb database (no {MARKER}); "
                                    "create one with graphdb ingest, graphdb demo or connect()")
        self.host = host
        self.write = write
        self.token = token or secrets.token_urlsafe(24)
        self._socket = _bind(host, port)
        self.port = self._socket.getsockname()[1]
        from .results import ResultStore
        from .workers import Pool

        self.pool = Pool(self.path, workers=workers, write=write, files=write, **connect_options)
        self.store = ResultStore(result_budget)
        self._server = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The address to open, with the token."""
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") \
            else self.host
        return f"http://{host}:{self.port}/?token={self.token}"

    def _uvicorn(self):
        import uvicorn

        from .._version import __version__
        from .app import LOOPBACK, create_app

        loopback = self.host in LOOPBACK or self.host.startswith("127.")
        hosts = LOOPBACK | {self.host} if loopback else None
        app = create_app(self.pool, self.store, self.token, hosts=hosts, write=self.write,
                         info={"database": str(self.path), "version": __version__})
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                ws="websockets-sansio", ws_max_size=1 << 20,
                                timeout_graceful_shutdown=2)
        return uvicorn.Server(config)

    def start(self) -> "Server":
        """Serve in a background thread; returns once the server listens."""
        if self._thread is not None:
            return self
        self._server = self._uvicorn()
        started = threading.Event()
        server = self._server

        def run():
            try:
                server.run(sockets=[self._socket])
            finally:
                started.set()

        self._thread = threading.Thread(target=run, name="graphdb-explorer", daemon=True)
        self._thread.start()
        while not server.started and self._thread.is_alive():
            started.wait(0.02)
        if not server.started:
            raise OperationalError("the explorer's server did not start")
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until Ctrl-C (the command)."""
        self._server = self._uvicorn()
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._close()

    def stop(self) -> None:
        """Stop serving: statements cancelled, connections closed."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        self._close()

    def _close(self) -> None:
        self.pool.close()
        try:
            self._socket.close()
        except OSError:
            pass

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<graphdb explorer {self.url}{' (write)' if self.write else ''}>"

    def _repr_html_(self) -> str:
        import html

        url = html.escape(self.url)
        return (f'<p>graphdb explorer on {html.escape(str(self.path))}: '
                f'<a href="{url}" target="_blank">{url}</a></p>')


def _open_browser(url: str) -> bool:
    """Open ``url`` where a desktop browser can be found (never a text browser in this
    terminal)."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                 or os.environ.get("WAYLAND_DISPLAY")):
        return False
    import webbrowser

    try:
        return webbrowser.open(url)
    except webbrowser.Error:
        return False


def serve(database, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT, write: bool = False,
          workers: int = 2, browser: bool = True, **connect_options) -> int:
    """``graphdb serve``: print the address, open a browser, serve until Ctrl-C."""
    if host not in ("127.0.0.1", "localhost", "::1") and not host.startswith("127."):
        print(f"Warning: serving on {host}: anyone who can reach it and has the token can read "
              "the database", file=sys.stderr)
    server = Server(database, host=host, port=port, write=write, workers=workers,
                    **connect_options)
    mode = "read-write" if write else "read-only"
    print(f"graphdb explorer on {server.path} ({mode}); open\n\n    {server.url}\n\n"
          "Ctrl-C stops it.", flush=True)
    if browser:
        _open_browser(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
