"""The on-disk format of compiled kernel modules (executor.gpu.compiled), without a GPU."""

from __future__ import annotations

from graphdb.executor.gpu import compiled


def test_cache_file_round_trip(tmp_path):
    path = tmp_path / "graphdb-k.cubin"
    names = {"f<int>": "_Z1fIiEvv", "f<long long>": "_Z1fIxEvv"}
    compiled._write(path, b"\x7fELF binary", names)
    assert compiled._read(path, ("f<long long>", "f<int>")) == (b"\x7fELF binary", names)
    assert not list(tmp_path.glob(".graphdb-*.tmp"))  # written under a temporary name, renamed


def test_damaged_or_foreign_cache_files_are_misses(tmp_path):
    path = tmp_path / "graphdb-k.cubin"
    assert compiled._read(path, ()) is None  # missing
    compiled._write(path, b"binary", {"f<int>": "_Z1fIiEvv"})
    assert compiled._read(path, ("f<int>", "g<int>")) is None  # other name expressions
    data = path.read_bytes()
    path.write_bytes(data[:-1] + b"X")  # one byte of the binary changed
    assert compiled._read(path, ("f<int>",)) is None
    path.write_bytes(data[: len(data) // 2])  # truncated
    assert compiled._read(path, ("f<int>",)) is None
    path.write_bytes(b"something else entirely")
    assert compiled._read(path, ("f<int>",)) is None
    path.write_bytes(compiled._MAGIC + b"{not json\nbinary")
    assert compiled._read(path, ("f<int>",)) is None


def test_unwritable_cache_is_only_slower(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    compiled._write(blocker / "sub" / "graphdb-k.cubin", b"binary", {})  # mkdir fails: ignored
    assert not (blocker / "sub").exists()


def test_cache_dir_is_graphdbs(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHDB_CACHE_DIR", str(tmp_path))
    assert compiled.cache_dir() == tmp_path / "cuda"
    monkeypatch.delenv("GRAPHDB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compiled.cache_dir() == tmp_path / "xdg" / "graphdb" / "cuda"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert compiled.cache_dir().parts[-3:] == (".cache", "graphdb", "cuda")
