"""Runs the data-driven SQL tests in ``tests/sql/**/*.test``.

The format follows DuckDB's sqllogictest and Kuzu's ``.test`` files. Blocks are separated by
blank lines; ``#`` starts a comment line.

    load NAME FILE [--undirected] [--vertices FILE] [--weight COL|none]
                                                        ingest tests/sql/data/FILE as graph NAME
    require function NAME                               skip the file unless NAME is registered

    statement ok
    SQL

    statement error [ErrorClass]
    SQL
    ----
    text the error message must contain (case-insensitive)

    query rowsort | ordered | contains
    SQL (may span lines)
    ----
    1 | 0.5 | NULL | true | text

``rowsort`` compares rows as a multiset, ``ordered`` in order, ``contains`` checks that each
expected line is a substring of some output line (for EXPLAIN). Numbers compare with a relative
tolerance of 1e-6. Every database is new per file, so files are independent.

Every file runs under each device present and under each kind of graph-operator variant: the
cost model's choice, then every operator forced onto its streamed variants (Subway, edge chunks)
and onto page streaming (the ``debug_variant`` setting, which also cuts the budget so that they
stream in several pieces). The answers must not change; EXPLAIN blocks, whose output describes
the plan, are checked under the cost model's choice on the CPU only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

import graphdb
from tools.pgq_conformance import rows_equal

ROOT = Path(__file__).parent
DATA = ROOT / "data"
FILES = sorted(ROOT.rglob("*.test"))


@dataclass
class Block:
    line: int
    kind: str  # load, statement, query
    mode: str
    sql: str
    expected: list[str]


def parse_file(path: Path) -> list[Block]:
    blocks, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not line or line.startswith("#"):
            i += 1
            continue
        start = i + 1
        head = line.split()
        if head[0] in ("load", "require"):
            blocks.append(Block(start, head[0], "", line, []))
            i += 1
            continue
        if head[0] not in ("statement", "query"):
            raise ValueError(f"{path.name}:{start}: unknown directive {line!r}")
        body, expected, i = [], [], i + 1
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            body.append(lines[i])
            i += 1
        if i < len(lines) and lines[i].strip() == "----":
            i += 1
            while i < len(lines) and lines[i].strip():
                expected.append(lines[i].strip())
                i += 1
        mode = " ".join(head[1:]) or ("rowsort" if head[0] == "query" else "ok")
        blocks.append(Block(start, head[0], mode, "\n".join(body), expected))
    return blocks


def _cell(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _sort_key(row: list[str]):
    out = []
    for cell in row:
        try:
            out.append((0, float(cell), ""))
        except ValueError:
            out.append((1, 0.0, cell))
    return out


def run_block(con, block: Block, where: str) -> None:
    if block.kind == "require":
        from graphdb.executor.algorithms import REGISTRY

        parts = block.sql.split()
        if parts[1:2] != ["function"] or len(parts) != 3:
            raise ValueError(f"{where}: expected 'require function NAME'")
        if parts[2] not in REGISTRY:
            pytest.skip(f"{parts[2]}() is not in this build's algorithm registry")
        return
    if block.kind == "load":
        parts = block.sql.split()
        name, file = parts[1], parts[2]
        vertices = str(DATA / parts[parts.index("--vertices") + 1]) if "--vertices" in parts \
            else None
        weight = parts[parts.index("--weight") + 1] if "--weight" in parts else "auto"
        con.ingest(name, DATA / file, vertices=vertices, undirected="--undirected" in parts,
                   weight=None if weight == "none" else weight)
        return
    if block.kind == "statement" and block.mode.startswith("error"):
        wanted = block.mode.split()[1:]
        with pytest.raises(graphdb.Error) as info:
            con.execute(block.sql).fetchall()
        message = str(info.value)
        if wanted:
            assert isinstance(info.value, getattr(graphdb, wanted[0])), \
                f"{where}: expected {wanted[0]}, got {type(info.value).__name__}: {message}"
        for text in block.expected:
            assert text.lower() in message.lower(), \
                f"{where}: error message {message!r} does not contain {text!r}"
        return
    try:
        result = con.execute(block.sql)
    except graphdb.Error as exc:
        raise AssertionError(f"{where}: {type(exc).__name__}: {exc}\n{block.sql}") from None
    if block.kind == "statement":
        return
    rows = [[_cell(v) for v in row] for row in result.fetchall()]
    if block.mode == "contains":
        lines = [" | ".join(r) for r in rows]
        for text in block.expected:
            assert any(text in line for line in lines), \
                f"{where}: no output line contains {text!r}:\n" + "\n".join(lines)
        return
    expected = [[c.strip() for c in line.split("|")] for line in block.expected]
    if block.mode == "rowsort":
        rows, expected = sorted(rows, key=_sort_key), sorted(expected, key=_sort_key)
    assert rows_equal(rows, expected), (
        f"{where}: {block.sql}\nexpected:\n" + "\n".join(" | ".join(r) for r in expected)
        + "\nactual:\n" + "\n".join(" | ".join(r) for r in rows))


#: (device, debug_variant) of every run of the corpus
MODES = [pytest.param(device, variant, id=f"{device}-{variant}",
                      marks=[pytest.mark.gpu] if device == "gpu" else [])
         for device in ("cpu", "gpu")
         for variant in ("auto", "streamed", "pages", "partitioned")]
#: Ranks of the 'partitioned' mode: simulated in the process (debug_ranks).
RANKS = 3


@pytest.mark.parametrize("device,variant", MODES)
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_sql_file(path: Path, tmp_path: Path, device: str, variant: str) -> None:
    default = (device, variant) == ("cpu", "auto")
    with graphdb.connect(tmp_path / "db", device=device) as con:
        con.execute(f"SET debug_variant = '{variant}'")
        if variant == "partitioned":
            con.execute(f"SET debug_ranks = {RANKS}")
        for block in parse_file(path):
            if not default and block.sql.lstrip().upper().startswith("EXPLAIN"):
                continue  # describes the plan, which the mode changes
            run_block(con, block, f"{path.relative_to(ROOT)}:{block.line}")
