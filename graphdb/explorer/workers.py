"""The explorer's statements: a few worker threads, each with a connection of its own, shared
fairly between the clients (browser tabs).

Every client has its own queue. A free worker takes the next job of the client that has the
fewest statements running (ties: the one that has waited longest), so one tab that sends fifty
statements, or one long statement, never holds back another tab: while a worker is free, every
client's first statement starts. A client may queue at most :data:`MAX_QUEUED` jobs.

Each worker opens the database itself (``read_only`` unless the server allows writes, and
without access to files outside the database unless it allows that too), so every statement is
a snapshot read on a connection no client shares a transaction with. Cancelling a job takes it
out of its queue, or interrupts its worker's connection when it runs (the runner stops at its
next operator, frontier level or iteration). A closed tab cancels all of its jobs.
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
import threading
import time
from typing import Any, Callable

from ..connection import connect
from ..errors import InterfaceError, OperationalError
from ..progress import ProgressReport

__all__ = ["Pool", "Client", "Job", "MAX_QUEUED"]

#: Jobs one client may have waiting; more are refused (a runaway script cannot fill memory).
MAX_QUEUED = 200
#: A cancelled statement is interrupted again this often (seconds), this many times at most.
_INTERRUPT_EVERY = 0.2
_INTERRUPT_TRIES = 25


class Client:
    """One browser tab (one WebSocket): its queue and what it runs."""

    _ids = itertools.count(1)

    def __init__(self):
        self.id = next(self._ids)
        self.queue: collections.deque[Job] = collections.deque()
        self.running: set[Job] = set()
        self.served = 0.0  # when a job of it last started (fair order)
        self.closed = False


class Job:
    """One piece of work for a worker: ``work(connection, job)``, its future, its progress."""

    def __init__(self, client: Client, work: Callable[[Any, "Job"], Any],
                 on_progress: Callable[[ProgressReport], None] | None = None):
        self.client = client
        self.work = work
        self.on_progress = on_progress
        self.future: concurrent.futures.Future = concurrent.futures.Future()
        self.worker: _Worker | None = None
        self.cancelled = False
        self.queued_at = time.perf_counter()


class _Worker:
    def __init__(self, pool: "Pool", index: int):
        self.pool = pool
        self.con = None
        self.job: Job | None = None
        self.thread = threading.Thread(target=self._loop, name=f"graphdb-explorer-{index}",
                                       daemon=True)

    def _open(self):
        pool = self.pool
        con = connect(pool.path, read_only=not pool.write, create=False, **pool.options)
        if not pool.files:
            con.disable_external_access()
        con.set_progress_handler(self._progress)
        return con

    def _progress(self, report: ProgressReport) -> None:
        job = self.job
        if job is not None and job.on_progress is not None:
            job.on_progress(report)

    def _loop(self) -> None:
        pool = self.pool
        while True:
            job = pool._next()
            if job is None:
                break
            try:
                if self.con is None:
                    self.con = self._open()
                if job.cancelled:
                    raise OperationalError("cancelled")
                result = job.work(self.con, job)
            except BaseException as exc:  # handed to whoever waits on the future
                if job.cancelled and not isinstance(exc, InterfaceError):
                    exc = OperationalError("cancelled")
                job.future.set_exception(exc)
            else:
                job.future.set_result(result)
            finally:
                pool._done(job)
        if self.con is not None:
            self.con.close()


class Pool:
    """``workers`` threads running clients' jobs on their own connections to ``path``."""

    def __init__(self, path, *, workers: int = 2, write: bool = False, files: bool = False,
                 **options):
        self.path = path
        self.write = write
        self.files = files  # may statements read and write files outside the database
        self.options = options  # connect() keywords (device, memory_limit, ...)
        self.cache: dict[str, Any] = {}  # what every tab asks and never changes (function names)
        self._lock = threading.Condition()
        self._clients: list[Client] = []
        self._closing = False
        self._workers = [_Worker(self, i) for i in range(max(1, workers))]
        for worker in self._workers:
            worker.thread.start()

    # -- clients ------------------------------------------------------------------------------
    def client(self) -> Client:
        client = Client()
        with self._lock:
            self._clients.append(client)
        return client

    def forget(self, client: Client) -> None:
        """A closed tab: its queued jobs dropped, its running ones interrupted."""
        with self._lock:
            client.closed = True
            jobs = list(client.queue) + list(client.running)
            if client in self._clients:
                self._clients.remove(client)
        for job in jobs:
            self.cancel(job)

    def submit(self, client: Client, work: Callable[[Any, Job], Any],
               on_progress: Callable[[ProgressReport], None] | None = None) -> Job:
        job = Job(client, work, on_progress)
        with self._lock:
            if self._closing or client.closed:
                raise InterfaceError("the explorer is shutting down")
            if len(client.queue) >= MAX_QUEUED:
                raise OperationalError(f"{MAX_QUEUED} statements are already waiting in this "
                                       "tab; wait for them or cancel them")
            client.queue.append(job)
            self._lock.notify()
        return job

    def cancel(self, job: Job) -> None:
        with self._lock:
            job.cancelled = True
            if job in job.client.queue:
                job.client.queue.remove(job)
                job.future.set_exception(OperationalError("cancelled"))
                return
            worker = job.worker
        self._interrupt(worker, job, tries=_INTERRUPT_TRIES)

    def _interrupt(self, worker: "_Worker | None", job: Job, tries: int) -> None:
        """Interrupt ``job``'s connection, again every few tenths of a second while it still
        runs: an interrupt that comes while the statement is parsed or planned, before its
        runner starts, would be forgotten."""
        with self._lock:  # the worker cannot move on to another job meanwhile
            if worker is None or worker.job is not job or worker.con is None:
                return
            worker.con.interrupt()
        if tries > 1:
            timer = threading.Timer(_INTERRUPT_EVERY, self._interrupt, (worker, job, tries - 1))
            timer.daemon = True
            timer.start()

    # -- workers ------------------------------------------------------------------------------
    def _next(self) -> Job | None:
        """The next job for a free worker (fair between clients); None when closing."""
        with self._lock:
            while True:
                if self._closing:
                    return None
                waiting = [c for c in self._clients if c.queue]
                if waiting:
                    client = min(waiting, key=lambda c: (len(c.running), c.served))
                    job = client.queue.popleft()
                    client.running.add(job)
                    client.served = time.perf_counter()
                    job.worker = next(w for w in self._workers
                                      if w.thread is threading.current_thread())
                    job.worker.job = job
                    return job
                self._lock.wait()

    def _done(self, job: Job) -> None:
        with self._lock:
            job.client.running.discard(job)
            if job.worker is not None:
                job.worker.job = None
            job.worker = None

    @property
    def busy(self) -> int:
        """Jobs running now."""
        with self._lock:
            return sum(len(c.running) for c in self._clients)

    def close(self, timeout: float = 5.0) -> None:
        """Cancel everything, stop the workers and close their connections."""
        with self._lock:
            self._closing = True
            clients = list(self._clients)
            self._lock.notify_all()
        for client in clients:
            self.forget(client)
        deadline = time.monotonic() + timeout
        for worker in self._workers:
            worker.thread.join(max(0.0, deadline - time.monotonic()))
