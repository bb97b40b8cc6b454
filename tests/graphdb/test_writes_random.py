"""Random sequences of writes, transactions and checkpoints, each step compared with a fresh
ingest of the same graph (tests/graphdb/writes_oracle.py): every algorithm, g.edges,
g.vertices, GRAPH_TABLE. Hypothesis draws the sequences and shrinks a failing one."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import graphdb

from .writes_oracle import LABELS, Model, compare, create


class WritesMachine(RuleBasedStateMachine):
    directed = True
    weighted = True
    strings = False

    def __init__(self):
        super().__init__()
        self.con = graphdb.connect()
        self.model = Model(self.directed, self.weighted, self.strings)
        self.rng = random.Random(0)
        self.open: Model | None = None  # the model as of BEGIN, while a transaction is open

    def teardown(self):
        self.con.close()

    @initialize(loaded=st.booleans(), seed=st.integers(0, 2**16))
    def start(self, loaded, seed):
        self.rng = random.Random(seed)
        create(self.con, self.model, 12 if loaded else 0, self.rng)
        self.con.execute("SET compaction_threshold = 0")  # compactions only by CHECKPOINT here

    # -- helpers --------------------------------------------------------------------------------
    def vertex(self, fresh: float = 0.0):
        known = sorted(self.model.vertices)
        if known and self.rng.random() >= fresh:
            return self.rng.choice(known)
        return self.model.vid(self.rng.randrange(40))

    def sql_value(self, v):
        return repr(v)

    # -- writes ---------------------------------------------------------------------------------
    @rule(seed=st.integers(0, 2**16), count=st.integers(1, 4))
    def insert_edges(self, seed, count):
        self.rng.seed(seed)
        rows, values = [], []
        for _ in range(count):
            src, dst = self.vertex(0.3), self.vertex(0.3)
            weight, label = self.rng.randint(0, 9), self.rng.choice(LABELS)
            rows.append((src, dst, weight, label))
            values.append(f"({src!r}, {dst!r}"
                          + (f", {weight}" if self.weighted else "") + f", '{label}')")
        columns = "src, dst" + (", weight" if self.weighted else "") + ", label"
        result = self.con.execute(f"INSERT INTO g.edges ({columns}) VALUES {', '.join(values)}")
        assert result.fetchall() == [(count,)]
        for row in rows:
            self.model.add_edge(*row)

    @rule(seed=st.integers(0, 2**16), count=st.integers(1, 6))
    def insert_single_rows(self, seed, count):
        """One-row INSERTs with parameters (kept and applied together inside a transaction),
        with two column orders taking turns and a row refused for its weight among them."""
        self.rng.seed(seed)
        for i in range(count):
            src, dst = self.vertex(0.3), self.vertex(0.3)
            weight, label = self.rng.randint(0, 9), self.rng.choice(LABELS)
            named = {"src": src, "dst": dst, "label": label}
            if self.weighted:
                named["weight"] = weight
            columns = sorted(named, reverse=bool(i % 2))
            marks = ", ".join("?" * len(columns))
            sql = f"INSERT INTO g.edges ({', '.join(columns)}) VALUES ({marks})"
            if self.weighted and self.rng.random() < 0.2:
                with pytest.raises(graphdb.ProgrammingError, match="non-negative"):
                    self.con.execute(sql, [-1.0 if c == "weight" else named[c]
                                           for c in columns])
            assert self.con.execute(sql, [named[c] for c in columns]).fetchall() == [(1,)]
            self.model.add_edge(src, dst, weight, label)

    @rule(seed=st.integers(0, 2**16), count=st.integers(1, 12))
    def insert_arrow(self, seed, count):
        self.rng.seed(seed)
        rows = [(self.vertex(0.2), self.vertex(0.2), self.rng.randint(1, 9),
                 self.rng.choice(LABELS)) for _ in range(count)]
        id_type = pa.string() if self.strings else pa.int64()
        table = {"src": pa.array([r[0] for r in rows], id_type),
                 "dst": pa.array([r[1] for r in rows], id_type),
                 "label": [r[3] for r in rows]}
        if self.weighted:
            table["weight"] = [float(r[2]) for r in rows]
        assert self.con.insert_edges("g", pa.table(table)) == count
        for row in rows:
            self.model.add_edge(*row)

    @rule(seed=st.integers(0, 2**16))
    def insert_vertex(self, seed):
        self.rng.seed(seed)
        v = self.model.vid(100 + self.rng.randrange(60))
        name = self.rng.choice(["ann", "bob", None])
        if v in self.model.vertices:
            with pytest.raises(graphdb.ProgrammingError, match="exists already"):
                self.con.execute("INSERT INTO g.vertices (id, name) VALUES (?, ?)", [v, name])
            return
        self.con.execute("INSERT INTO g.vertices (id, name) VALUES (?, ?)", [v, name])
        self.model.vertices[v] = name

    @rule(seed=st.integers(0, 2**16))
    def delete_edges_of(self, seed):
        self.rng.seed(seed)
        if not self.model.vertices:
            return
        v = self.vertex()
        deleted = self.model.delete_edges(lambda e: not self.model.touches(e, v))
        result = self.con.execute("DELETE FROM g.edges WHERE src = ?", [v])
        assert result.fetchall() == [(deleted,)]

    @rule(seed=st.integers(0, 2**16))
    def delete_edges_where(self, seed):
        self.rng.seed(seed)
        if self.weighted and self.rng.random() < 0.5:
            w = self.rng.randint(3, 9)
            deleted = self.model.delete_edges(lambda e: not e[2] > w)
            sql = f"DELETE FROM g.edges WHERE weight > {w}"
        else:
            label = self.rng.choice(LABELS)
            deleted = self.model.delete_edges(lambda e: e[3] != label)
            sql = f"DELETE FROM g.edges e WHERE e.label = '{label}'"
        assert self.con.execute(sql).fetchall() == [(deleted,)]

    @rule(seed=st.integers(0, 2**16))
    def update_edges(self, seed):
        self.rng.seed(seed)
        label = self.rng.choice(LABELS)
        new = self.rng.choice(LABELS)
        changed = 0
        for e in self.model.edges:
            if e[3] == label:
                changed += 1
                e[3] = new
                if self.weighted:
                    e[2] += 1
        sql = f"UPDATE g.edges SET label = '{new}'" + (", weight = weight + 1"
                                                      if self.weighted else "")
        assert self.con.execute(sql + f" WHERE label = '{label}'").fetchall() == [(changed,)]

    @rule(seed=st.integers(0, 2**16))
    def move_edge(self, seed):
        self.rng.seed(seed)
        if not self.model.edges:
            return
        e = self.rng.choice(self.model.edges)
        target = self.vertex(0.3)
        matches = [x for x in self.model.edges if x[:2] == e[:2] and x[2:] == e[2:]] if \
            self.directed else []
        if not self.directed:
            return  # a moved undirected edge: which endpoint stays is ambiguous by design
        sql = "UPDATE g.edges SET dst = ? WHERE src = ? AND dst = ? AND label = ?"
        params = [target, e[0], e[1], e[3]]
        if self.weighted:
            sql += " AND weight = ?"
            params.append(e[2])
        result = self.con.execute(sql, params)
        assert result.fetchall() == [(len(matches),)]
        for x in matches:
            x[1] = target
        self.model.vertices.setdefault(target, None)

    @rule(seed=st.integers(0, 2**16))
    def detach_delete(self, seed):
        self.rng.seed(seed)
        if not self.model.vertices:
            return
        v = self.vertex()
        self.model.delete_edges(lambda e: v not in (e[0], e[1]))
        del self.model.vertices[v]
        assert self.con.execute("DETACH DELETE FROM g.vertices WHERE id = ?",
                                [v]).fetchall() == [(1,)]

    @rule(seed=st.integers(0, 2**16))
    def delete_vertex(self, seed):
        self.rng.seed(seed)
        if not self.model.vertices:
            return
        v = self.vertex()
        degree = self.model.degree(v)
        if degree:
            with pytest.raises(graphdb.ProgrammingError, match="DETACH"):
                self.con.execute("DELETE FROM g.vertices WHERE id = ?", [v])
            return
        del self.model.vertices[v]
        assert self.con.execute("DELETE FROM g.vertices WHERE id = ?", [v]).fetchall() == [(1,)]

    @rule(seed=st.integers(0, 2**16))
    def rename_vertex(self, seed):
        self.rng.seed(seed)
        if not self.model.vertices:
            return
        v = self.vertex()
        name = self.rng.choice(["cy", "dee", None])
        self.model.vertices[v] = name
        self.con.execute("UPDATE g.vertices SET name = ? WHERE id = ?", [name, v])

    @rule(commit=st.booleans())
    def begin(self, commit):
        if self.open is None:
            self.con.execute("BEGIN")
            self.open = self.model.copy()

    @rule(commit=st.booleans())
    def end(self, commit):
        if self.open is None:
            return
        if commit:
            self.con.execute("COMMIT")
        else:
            self.con.execute("ROLLBACK")
            self.model = self.open
        self.open = None

    @rule()
    def checkpoint(self):
        if self.open is None:
            self.con.execute("CHECKPOINT g")

    @invariant()
    def same_as_fresh_ingest(self):
        if self.model.vertices or self.model.edges or self.open is not None:
            compare(self.con, self.model, self.rng)


class UndirectedMachine(WritesMachine):
    directed = False


class StringIdsMachine(WritesMachine):
    weighted = False
    strings = True


CHECKS = settings(max_examples=3, stateful_step_count=12, deadline=None,
                  suppress_health_check=list(HealthCheck))
LONG = settings(max_examples=40, stateful_step_count=40, deadline=None,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.reuse, Phase.generate])

TestDirected = WritesMachine.TestCase
TestDirected.settings = CHECKS
TestUndirected = UndirectedMachine.TestCase
TestUndirected.settings = CHECKS
TestStringIds = StringIdsMachine.TestCase
TestStringIds.settings = CHECKS


@pytest.mark.slow
@pytest.mark.parametrize("machine", [WritesMachine, UndirectedMachine, StringIdsMachine])
def test_long_sequences(machine):
    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(machine, settings=LONG)
