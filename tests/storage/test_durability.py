"""Group commit (storage/durability.py): when a write under ``synchronous = 'full'`` may return,
and that concurrent writers share syncs.

The protocol is checked with a fake LMDB (a transaction counter, a sync that records what it
covered): a wait returns only once a sync that started after the commit covered it, a later
commit landed (its data flush wrote the waiting commit's meta page), or the record of another
process's sync covers it; never on a record of another data file. Then through the database:
the setting, a sync per commit for one writer and fewer under concurrent writers of one process
and of several processes, every row there.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import time

import pytest

import graphdb
from graphdb.errors import InvalidInputError
from graphdb.storage import durability
from graphdb.storage.durability import GroupSync


class FakeLMDB:
    """Transactions committed in order; a sync covers every one committed when it starts."""

    def __init__(self):
        self.last = 0
        self.durable = 0  # what a sync has covered
        self.syncs = 0
        self.lock = threading.Lock()

    def commit(self) -> int:
        with self.lock:
            self.last += 1
            return self.last

    def newest(self) -> int:
        return self.last

    def sync(self) -> None:
        covered = self.last
        time.sleep(0.01)
        self.syncs += 1
        self.durable = max(self.durable, covered)


def _group(tmp_path) -> GroupSync:
    data = tmp_path / "data.mdb"
    data.touch()
    return GroupSync(tmp_path, data, 0o600)


def test_a_wait_returns_once_a_sync_after_the_commit_covered_it(tmp_path):
    lmdb, group = FakeLMDB(), _group(tmp_path)
    t = lmdb.commit()
    group.wait(t, lmdb.newest, lmdb.sync)
    assert lmdb.syncs == 1 and lmdb.durable >= t
    group.wait(t, lmdb.newest, lmdb.sync)  # known durable: no second sync
    assert lmdb.syncs == 1
    t2 = lmdb.commit()
    t3 = lmdb.commit()
    group.committed(t3)  # t3's data flush wrote t2's meta page
    group.wait(t2, lmdb.newest, lmdb.sync)
    assert lmdb.syncs == 1
    group.wait(t3, lmdb.newest, lmdb.sync)
    assert lmdb.syncs == 2 and lmdb.durable >= t3
    group.close()


def test_a_later_commit_covers_a_waiting_one(tmp_path):
    lmdb, group = FakeLMDB(), _group(tmp_path)
    t = lmdb.commit()
    lmdb.commit()  # landed: its meta page was written after its data flush
    group.wait(t, lmdb.newest, lmdb.sync)
    assert lmdb.syncs == 0
    group.close()


def test_a_writer_at_work_is_waited_for_then_not_longer_than_about_a_sync(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(durability, "MIN_WAIT", 0.3)
    lmdb, group = FakeLMDB(), _group(tmp_path)
    t = lmdb.commit()
    threading.Timer(0.01, lmdb.commit).start()  # the writer that was queueing commits
    group.wait(t, lmdb.newest, lmdb.sync, lambda: True)
    assert lmdb.syncs == 0
    t = lmdb.commit()
    start = time.monotonic()
    group.wait(t, lmdb.newest, lmdb.sync, lambda: True)  # a writer that never commits
    assert lmdb.syncs == 1 and lmdb.durable >= t
    assert time.monotonic() - start < 3.0
    group.close()


def test_threads_share_syncs_and_each_returns_durable(tmp_path):
    lmdb, group = FakeLMDB(), _group(tmp_path)
    done = []

    def writer():
        for _ in range(10):
            t = lmdb.commit()
            group.wait(t, lmdb.newest, lmdb.sync)
            assert lmdb.durable >= t or lmdb.last > t  # on return: synced, or covered
            done.append(t)

    threads = [threading.Thread(target=writer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(done) == 60
    assert lmdb.syncs < 60
    group.close()


def test_the_record_of_another_process_is_shared_and_voided_by_a_new_data_file(tmp_path):
    lmdb = FakeLMDB()
    first, second = _group(tmp_path), _group(tmp_path)  # two processes' views of the file
    for _ in range(5):
        lmdb.commit()
    first.wait(5, lmdb.newest, lmdb.sync)
    assert lmdb.syncs == 1
    second.wait(4, lmdb.newest, lmdb.sync)  # the first's sync covered it
    assert lmdb.syncs == 1
    (tmp_path / "new.mdb").touch()  # compaction replaced the data file (another inode)
    (tmp_path / "new.mdb").replace(tmp_path / "data.mdb")
    second.forget()
    second.wait(5, lmdb.newest, lmdb.sync)
    assert lmdb.syncs == 2
    first.close()
    second.close()


def test_a_failed_sync_records_nothing(tmp_path):
    lmdb, group = FakeLMDB(), _group(tmp_path)
    t = lmdb.commit()

    def broken():
        raise OSError("disk gone")

    with pytest.raises(OSError):
        group.wait(t, lmdb.newest, broken)
    group.wait(t, lmdb.newest, lmdb.sync)
    assert lmdb.syncs == 1
    group.close()


# -- through the database -------------------------------------------------------------------------
def _graph(path):
    with graphdb.connect(path) as con:
        con.execute("CREATE GRAPH g (EDGES (weight DOUBLE))")


def _shared_syncs(con) -> int:
    from graphdb.storage.env import _OPEN

    return _OPEN[str(con.path.resolve())].durability.syncs


def test_the_setting(tmp_path):
    _graph(tmp_path / "db")
    with graphdb.connect(tmp_path / "db") as con:
        shown = {r[0]: r[1] for r in con.execute("SHOW SETTINGS").fetchall()}
        assert shown["synchronous"] == "full" and con.catalog.env.synchronous == "full"
        con.execute("SET synchronous = 'normal'")
        assert con.catalog.env.synchronous == "normal"
        with pytest.raises(InvalidInputError, match="full, normal"):
            con.execute("SET synchronous = 'off'")
        con.execute("RESET synchronous")
        assert con.catalog.env.synchronous == "full"


def test_one_writer_syncs_every_commit_under_full_and_none_under_normal(tmp_path):
    _graph(tmp_path / "db")
    with graphdb.connect(tmp_path / "db") as con:
        before = _shared_syncs(con)
        for i in range(5):
            con.execute("INSERT INTO g.edges VALUES (?, ?, 1.0)", [i, i + 1])
        assert _shared_syncs(con) - before == 5
        con.execute("SET synchronous = 'normal'")
        for i in range(5):
            con.execute("INSERT INTO g.edges VALUES (?, ?, 1.0)", [i, i + 2])
        assert _shared_syncs(con) - before == 5
        assert con.execute("SELECT count(*) FROM g.edges").fetchone() == (10,)


def _slow_syncs(monkeypatch, seconds: float) -> None:
    """Give every group sync the time of a slow disk's, so writers overlap for sure."""
    wait = GroupSync.wait

    def slow_wait(self, txnid, last_txnid, sync, writing_here=lambda: False):
        def slow():
            time.sleep(seconds)
            sync()

        return wait(self, txnid, last_txnid, slow, writing_here)

    monkeypatch.setattr(GroupSync, "wait", slow_wait)
    monkeypatch.setattr(durability, "MIN_WAIT", 0.05)


def test_writers_of_one_process_share_syncs(tmp_path, monkeypatch):
    _graph(tmp_path / "db")
    _slow_syncs(monkeypatch, 0.02)
    cons = [graphdb.connect(tmp_path / "db") for _ in range(4)]
    before = _shared_syncs(cons[0])

    def writer(con, k):
        for i in range(8):
            con.execute("INSERT INTO g.edges VALUES (?, ?, 1.0)", [k, i])

    threads = [threading.Thread(target=writer, args=(c, k)) for k, c in enumerate(cons)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    syncs = _shared_syncs(cons[0]) - before
    assert syncs < 32, syncs
    assert sorted(cons[0].execute("SELECT src, dst FROM g.edges").fetchall()) == \
        sorted((k, i) for k in range(4) for i in range(8))
    for con in cons:
        con.close()


def _process_writer(path, k, n, barrier, results):
    from graphdb.storage import durability as d

    d.MIN_WAIT = 0.05
    with graphdb.connect(path) as con:
        con.execute("INSERT INTO g.edges VALUES (?, ?, 2.0)", [k, -1])
        before = _shared_syncs(con)
        barrier.wait()
        for i in range(n):
            con.execute("INSERT INTO g.edges VALUES (?, ?, 1.0)", [k, i])
        results.put(_shared_syncs(con) - before)


def test_writers_of_several_processes_share_syncs(tmp_path):
    _graph(tmp_path / "db")
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(3), ctx.Queue()
    workers = [ctx.Process(target=_process_writer, args=(str(tmp_path / "db"), k, 15, barrier,
                                                         results)) for k in range(3)]
    for w in workers:
        w.start()
    syncs = sum(results.get(timeout=300) for _ in workers)
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode == 0
    assert syncs < 45, syncs
    with graphdb.connect(tmp_path / "db", read_only=True) as con:
        rows = sorted(con.execute("SELECT src, dst FROM g.edges WHERE weight = 1").fetchall())
    assert rows == sorted((k, i) for k in range(3) for i in range(15))
