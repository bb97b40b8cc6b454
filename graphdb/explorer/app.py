"""The explorer's web application (Starlette): the page, its static files, and one WebSocket per
tab that carries statements, their progress and results, pages, charts and graph drawings.

Every request must carry the server's token: in the URL the server printed (``/?token=...``;
the page then keeps it in a cookie of its own), an ``Authorization: token ...`` header, or
``?token=`` on the WebSocket. A request for another host name than the one bound (a DNS
rebinding page) or a WebSocket opened from another origin is refused. Every answer carries a
Content-Security-Policy that lets the page load scripts and connect only to this server.

The WebSocket speaks JSON: the page sends ``{"op": ..., "id": n, ...}`` and every answer
carries the ``id`` it answers. Operations: ``run`` (a statement: ``progress`` while it runs,
then ``result`` with its first page, or ``error``), ``cancel``, ``page``, ``chart``, ``graph``,
``expand`` (a vertex's neighbours), ``vertex`` (its properties) and ``schema``. Closing the
WebSocket (a closed tab) cancels the tab's statements and lets its results go.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
import time
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..errors import Error
from . import operations
from .results import ResultStore
from .workers import Client, Pool

__all__ = ["create_app", "CSP", "LOOPBACK"]

STATIC = Path(__file__).parent / "static"
#: Host names that reach a server bound to the loopback interface.
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
#: Nothing but this server: scripts, styles, images and connections from it alone.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
            "Cross-Origin-Opener-Policy": "same-origin"}
#: A statement running longer than this gets progress messages (seconds), this often.
PROGRESS_AFTER = 0.3
PROGRESS_EVERY = 0.25

_REFUSED_PAGE = """<!doctype html><meta charset="utf-8"><title>graphdb explorer</title>
<p>This page needs the token that <code>graphdb serve</code> printed: open the address it
printed, with its <code>?token=...</code>.</p>"""


class _Guard:
    """ASGI middleware: the token, the host name, the WebSocket's origin, the headers."""

    def __init__(self, app, token: str, hosts: frozenset[str] | None):
        self.app = app
        self.token = token
        self.cookie = "graphdb_explorer_" + hashlib.sha256(token.encode()).hexdigest()[:12]
        self.hosts = hosts  # None: any (bound to a public interface on purpose)

    def _token_ok(self, candidate: str | None) -> bool:
        return bool(candidate) and secrets.compare_digest(candidate.encode(), self.token.encode())

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        request = Request(scope) if scope["type"] == "http" else WebSocket(scope, receive, send)
        host = request.headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if self.hosts is not None and name not in self.hosts:
            return await self._refuse(scope, receive, send, 403, "unknown host name")
        if scope["type"] == "websocket":
            origin = request.headers.get("origin")
            if origin is not None and origin.split("://", 1)[-1] != host:
                return await self._refuse(scope, receive, send, 403, "cross-origin WebSocket")
        header = request.headers.get("authorization", "")
        given = request.query_params.get("token")
        ok = (self._token_ok(given) or self._token_ok(request.cookies.get(self.cookie))
              or (header.startswith("token ") and self._token_ok(header[6:].strip())))
        if not ok:
            return await self._refuse(scope, receive, send, 403, "missing or wrong token")
        scope.setdefault("state", {})
        scope["state"]["set_cookie"] = self._token_ok(given)

        async def with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                if scope["path"].startswith("/static/"):
                    # kept by the browser and revalidated (ETag): a reload neither downloads
                    # nor compiles the libraries again
                    headers.append((b"cache-control", b"private, no-cache"))
                    present.add(b"cache-control")
                for key, value in _HEADERS.items():
                    if key.lower().encode() not in present:
                        headers.append((key.lower().encode(), value.encode()))
                if scope["state"].get("set_cookie") and scope["type"] == "http":
                    headers.append((b"set-cookie", (
                        f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                    ).encode()))
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, with_headers)

    async def _refuse(self, scope, receive, send, status: int, why: str):
        if scope["type"] == "websocket":
            await receive()  # the connect message
            await send({"type": "websocket.close", "code": 1008, "reason": why})
            return
        body = _REFUSED_PAGE if why == "missing or wrong token" else why
        response = (HTMLResponse if body.startswith("<!doctype") else PlainTextResponse)(
            body, status_code=status, headers=_HEADERS)
        await response(scope, receive, send)


def create_app(pool: Pool, store: ResultStore, token: str, *, hosts: frozenset[str] | None,
               write: bool, info: dict) -> Any:
    """The application over ``pool``'s connections; ``info`` is shown in the page's header."""
    index = (STATIC / "index.html").read_text()

    async def page(request: Request) -> Response:
        return HTMLResponse(index)

    async def socket(websocket: WebSocket) -> None:
        await websocket.accept()
        session = Tab(websocket, pool, store, write, info)
        await session.serve()

    routes = [Route("/", page), WebSocketRoute("/ws", socket),
              Mount("/static", app=StaticFiles(directory=STATIC), name="static")]
    app = Starlette(routes=routes)
    return _Guard(app, token, hosts)


class Tab:
    """One tab's WebSocket."""

    def __init__(self, websocket: WebSocket, pool: Pool, store: ResultStore, write: bool,
                 info: dict):
        self.ws = websocket
        self.pool = pool
        self.store = store
        self.write = write
        self.info = info
        self.client: Client = pool.client()
        self.jobs: dict[int, Any] = {}  # message id -> Job, while it runs
        self.tasks: set[asyncio.Task] = set()
        self._send_lock = asyncio.Lock()

    async def send(self, message: dict) -> None:
        async with self._send_lock:
            await self.ws.send_text(json.dumps(message, allow_nan=False))

    async def serve(self) -> None:
        await self.send({"type": "hello", "write": self.write, **self.info})
        try:
            while True:
                text = await self.ws.receive_text()
                try:
                    message = json.loads(text)
                    if not isinstance(message, dict):
                        raise ValueError("not an object")
                except ValueError:
                    await self.send({"type": "error", "message": "not a JSON object"})
                    continue
                if message.get("op") == "cancel":
                    job = self.jobs.get(message.get("target"))
                    if job is not None:
                        self.pool.cancel(job)
                    continue
                task = asyncio.create_task(self._handle(message))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:  # a closed tab: its statements cancelled, its results let go
            self.pool.forget(self.client)
            self.store.drop_client(self.client.id)
            for task in list(self.tasks):
                task.cancel()

    async def _handle(self, message: dict) -> None:
        ident = message.get("id")
        try:
            handler = getattr(operations, "op_" + str(message.get("op")), None)
            if handler is None:
                raise ValueError(f"unknown operation {message.get('op')!r}")
            answer = await handler(self, message)
        except asyncio.CancelledError:
            return
        except Error as exc:
            answer = {"type": "error", "message": str(exc),
                      "line": getattr(exc, "line", None), "column": getattr(exc, "column", None)}
        except (ValueError, TypeError, KeyError) as exc:
            answer = {"type": "error", "message": f"bad request: {exc}"}
        except Exception as exc:  # a bug: said in one line, the server goes on
            logging.getLogger("graphdb.explorer").exception("operation %s failed",
                                                            message.get("op"))
            answer = {"type": "error",
                      "message": f"internal error ({type(exc).__name__}: {exc}); please report it"}
        try:
            await self.send({"id": ident, **answer})
        except (WebSocketDisconnect, RuntimeError):
            pass

    async def run_job(self, ident, work, progress: bool = False):
        """Run ``work(connection, job)`` on a worker; while it runs, after a moment, send the
        elapsed time and the statement's progress every so often."""
        last: dict = {}

        def on_progress(report) -> None:
            last["report"] = report

        job = self.pool.submit(self.client, work, on_progress if progress else None)
        self.jobs[ident] = job
        future = asyncio.wrap_future(job.future)
        start = time.perf_counter()
        try:
            if progress:
                from ..progress import describe_report

                try:
                    return await asyncio.wait_for(asyncio.shield(future), PROGRESS_AFTER)
                except asyncio.TimeoutError:
                    pass
                while True:
                    report = last.get("report")
                    await self.send({"id": ident, "type": "progress",
                                     "elapsed": time.perf_counter() - start,
                                     "text": describe_report(report) if report else "",
                                     "done": report.done if report else None,
                                     "total": report.total if report else None})
                    try:
                        return await asyncio.wait_for(asyncio.shield(future), PROGRESS_EVERY)
                    except asyncio.TimeoutError:
                        continue
            return await future
        except asyncio.CancelledError:
            self.pool.cancel(job)
            raise
        finally:
            self.jobs.pop(ident, None)
