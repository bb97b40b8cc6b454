"""Streaming readers for edge and vertex files.

Formats: CSV/TSV (header and delimiter options), SNAP text (``#`` or ``%`` comments anywhere, tab or
space separated), LDBC Graphalytics ``.v``/``.e``, Parquet and Arrow IPC; text inputs may be gzip, bz2 or
zstd compressed (``.gz``/``.bz2``/``.zst``); a glob pattern reads several files as one input.

Every file is read as a stream of Arrow record batches (pyarrow's streaming CSV reader,
``ParquetFile.iter_batches``, IPC batches), so memory stays at a few blocks whatever the file size.
pyarrow's streaming CSV reader parses on one thread, so a large uncompressed text file is cut
into byte-range parts at line ends, one reader thread each (``InputFiles.split``). Parsing never
loops over lines in Python; only when a reader rejects a file, or a later check rejects a row, is
the file scanned once more, line by line, to name the line and the problem.
"""

from __future__ import annotations

import contextlib
import copy
import glob as globmod
import hashlib
import io
import os
import shutil
import stat
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pyarrow as pa

from .errors import IngestError, IngestWarning, excerpt
from .formats import FORMATS, TEXT_FORMATS
from .streams import ByteRange, CommentFilter, CountingReader, NativeRaw
from .textscan import encoding_problem, fields_of_data_rows, first_bad_line, line_of_data_row

__all__ = ["FORMATS", "SPOOLED_INPUT", "STDIN", "TextLayout", "InputFile", "InputFiles", "NarrowIdsOverflow",
           "block_bytes_for", "detect_format", "is_stream", "shown_name", "spool_stream"]


_BY_EXTENSION = {
    ".csv": "csv", ".tsv": "tsv", ".txt": "txt", ".tab": "tsv", ".el": "txt", ".edges": "txt",
    ".e": "graphalytics", ".v": "graphalytics",
    ".parquet": "parquet", ".pq": "parquet",
    ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow", ".arrows": "arrow",
}
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd"}

#: Bytes of text pyarrow parses per block (at most). pyarrow's streaming CSV reader reads ahead
#: some 30-40 blocks, so the block size is what bounds the reader's memory; 1 MiB parses as fast
#: as larger blocks. Smaller memory budgets get smaller blocks (see ``block_bytes_for``).
BLOCK_BYTES = 1 << 20


def block_bytes_for(budget: int) -> int:
    """A text block size whose read-ahead stays a small share of a memory budget: with blocks
    of budget/1024, RMAT20 under a 64 MB limit peaked 23 MiB lower than with budget/256
    (pyarrow's read-ahead, and the blocks its allocator keeps, on each of two parts)."""
    return int(min(BLOCK_BYTES, max(64 << 10, budget // 1024)))


@dataclass(frozen=True)
class TextLayout:
    """How a text file is laid out; ``None`` means the format's default."""

    delimiter: str | None = None
    header: bool | None = None


def _split_compression(path: str) -> tuple[str, str | None]:
    suffix = Path(path).suffix.lower()
    if suffix in _COMPRESSION:
        return path[: -len(suffix)], _COMPRESSION[suffix]
    return path, None


def detect_format(path: str | os.PathLike, fmt: str = "auto") -> str:
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise IngestError(f"unknown format '{fmt}' (choose one of {', '.join(FORMATS)})",
                          file=str(path))
    if fmt != "auto":
        return fmt
    inner, _ = _split_compression(str(path))
    ext = Path(inner).suffix.lower()
    if ext not in _BY_EXTENSION:
        raise IngestError(
            f"cannot tell the format from the extension '{ext or '(none)'}'; "
            f"pass --format ({', '.join(FORMATS[1:])})",
            file=str(path),
        )
    return _BY_EXTENSION[ext]


def _first_line(exc: Exception) -> str:
    """An error's first line, cut short (pyarrow's can run to many lines)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."


def _lines_before_damage(path: str, compression: str) -> int:
    """Complete lines of a compressed file before its data ends or stops making sense, counted
    by decompressing small pieces (pyarrow's stream withholds the last large piece it read)."""
    import bz2
    import zlib

    make = {"gzip": lambda: zlib.decompressobj(wbits=47),  # a gzip member
            "bz2": bz2.BZ2Decompressor}.get(compression)
    lines = 0
    try:
        if make is None:  # zstd: no decompressor in the standard library; pyarrow's count
            with pa.input_stream(path, compression=compression) as stream:
                while chunk := stream.read(1 << 16):
                    lines += chunk.count(b"\n")
            return lines
        with open(path, "rb") as f:
            decoder = make()
            while piece := f.read(1 << 12):
                while piece:
                    lines += decoder.decompress(piece).count(b"\n")
                    piece = decoder.unused_data if decoder.eof else b""
                    if decoder.eof:  # another member (concatenated gzip or bz2 streams)
                        decoder = make()
    except (OSError, EOFError, ValueError, zlib.error, pa.ArrowInvalid):
        pass
    return lines


def _check_readable(path: str, shown: str | None = None) -> None:
    shown = shown or path
    p = Path(path)
    if not p.exists():
        raise IngestError("file does not exist", file=shown)
    if p.is_dir():
        raise IngestError(_directory_problem(p), file=shown)
    if not os.access(p, os.R_OK):
        raise IngestError("file is not readable (permission denied)", file=shown)
    if p.stat().st_size == 0:
        raise IngestError("file is empty", file=shown)


def _directory_problem(p: Path) -> str:
    """What to say of a directory given as an input: the glob that names its files."""
    suffixes = sorted({"".join(Path(f).suffixes[-2:]) for f in os.listdir(p)
                       if (p / f).is_file() and Path(f).suffix})
    example = f"'{p / ('*' + suffixes[0])}'" if len(suffixes) == 1 else f"'{p / '*.csv'}'"
    return f"is a directory, not a file; to load the files in it, give a quoted glob such as " \
           f"{example}"


#: The names of streamed inputs' copies in an ingest's temporary folder.
SPOOLED_INPUT = "input-"
#: The name standard input goes by: ``graphdb ingest db g -``.
STDIN = "-"


def is_stream(path: str) -> bool:
    """Whether an input is read as a stream, once: standard input (``-``, ``/dev/stdin``), a
    pipe, a process substitution (``<(zcat edges.csv.gz)``), a character device."""
    if path == STDIN or path.startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def spool_stream(path: str, folder: Path, fmt: str = "auto") -> str:
    """A stream's bytes copied to a file in ``folder`` (the ingest reads its input more than
    once), named with the extension its format and compression have: from ``fmt``, the
    stream's name, or else its first bytes (Parquet's and Arrow's magic numbers, a gzip, bz2 or
    zstd header, the first line's delimiter). Done once per stream: a second call (the ingest
    reading again with 64-bit ids) finds the copy."""
    stem = SPOOLED_INPUT + hashlib.sha1(path.encode()).hexdigest()[:12]
    for found in folder.glob(stem + ".*"):
        return str(found)
    raw = folder / (stem + ".raw")
    try:
        source = (contextlib.nullcontext(sys.stdin.buffer) if path == STDIN  # left open
                  else open(path, "rb"))
        with source as stream, open(raw, "wb") as out:
            shutil.copyfileobj(stream, out, 1 << 20)
    except OSError as exc:
        raise IngestError(f"cannot read the input: {exc.strerror or exc}",
                          file=shown_name(path)) from None
    named = "" if path == STDIN else Path(path).name
    inner, compression = _split_compression(named)
    ext = Path(inner).suffix.lower() if Path(inner).suffix.lower() in _BY_EXTENSION else ""
    if not ext or not compression:
        sniffed_ext, sniffed_compression = _sniff(raw)
        ext = ext or sniffed_ext
        compression = compression or sniffed_compression
    if fmt != "auto":
        ext = ".e" if fmt == "graphalytics" else "." + fmt
    suffix = {"gzip": ".gz", "bz2": ".bz2", "zstd": ".zst", None: ""}[compression]
    target = folder / (stem + ext + suffix)
    raw.rename(target)
    return str(target)


_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\x28\xb5\x2f\xfd", "zstd"))


def _sniff(path: Path) -> tuple[str, str | None]:
    """(extension, compression) of a file without a name to go by, from its first bytes."""
    with open(path, "rb") as f:
        head = f.read(4)
    if head == b"PAR1":
        return ".parquet", None
    if head.startswith(b"ARRO") or head == b"\xff\xff\xff\xff":
        return ".arrow", None
    compression = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    try:
        with pa.input_stream(str(path), compression=compression) as stream:
            text = stream.read(1 << 16)
    except (OSError, pa.ArrowInvalid):
        return ".csv", compression
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith((b"#", b"%")):
            if b"," in line:
                return ".csv", compression
            return (".tsv" if b"\t" in line else ".txt"), compression
    return ".csv", compression


def shown_name(path: str) -> str:
    """How an input is named in messages."""
    return "<stdin>" if path in (STDIN, "/dev/stdin") else path


#: Fields read as missing (null). Not "nan" and its kin, which pyarrow's defaults include: a weight
#: written as nan is a NaN weight (refused or kept as --invalid-weights says), not a missing one.
NULL_VALUES = ["", "#N/A", "#N/A N/A", "#NA", "N/A", "NA", "NULL", "n/a", "null"]
#: Bytes of an edge list's line, on the high side (a line of two 7-digit ids is 16 bytes; RMAT20's
#: average 13.9): the row count estimated from a text file's size.
TEXT_BYTES_PER_ROW = 16
#: Uncompressed text files at least this large are parsed in parallel parts (one per core):
#: pyarrow's streaming CSV reader parses on one thread.
SPLIT_BYTES = 32 << 20


class NarrowIdsOverflow(Exception):
    """Ids parsed as 32-bit integers (the first rows said they would fit) met one that does not,
    or one that is no integer at all: the input is read again with 64-bit ids."""


class InputFile:
    """One input file (or one byte range of it), read as a stream of record batches."""

    def __init__(self, path: str, fmt: str = "auto", layout: TextLayout = TextLayout(),
                 block_bytes: int | None = None, shown: str | None = None):
        self.path = str(path)
        #: the name messages give it (standard input's copy is "<stdin>")
        self.shown = shown or self.path
        self.block_bytes = block_bytes or BLOCK_BYTES
        if Path(self.path).is_dir():  # before the format: a directory has no extension
            _check_readable(self.path, self.shown)
        self.format = detect_format(self.path, fmt)
        _check_readable(self.path, self.shown)
        self.size = Path(self.path).stat().st_size
        _, self.compression = _split_compression(self.path)
        if self.compression and self.format not in TEXT_FORMATS:
            raise IngestError(f"{self.format} files carry their own compression; "
                              "do not compress the whole file", file=self.shown)
        self._raw = None
        self._delivered: CountingReader | None = None  # a compressed file's decompressed bytes
        self._batches = 0  # text batches parsed: one block of block_bytes each
        #: an edge file with no rows is a graph without edges (its vertices come from a vertex
        #: file); set by the ingest when there is one
        self.may_be_empty = False
        self._rows_done = 0
        self._rows_total = None
        self.start, self.stop = 0, None  # a part: bytes [start, stop) of the file
        self.names: list[str] | None = None  # a later part's column names (it has no header)
        self.types: dict[str, pa.DataType] = {}  # and their types
        if self.format in TEXT_FORMATS:
            problem = encoding_problem(self._head())
            if problem is not None:
                raise IngestError(problem, file=self.shown, line=1)
            self.delimiter, self.header = self._layout(layout)
        else:
            self.delimiter, self.header = None, False

    # -- text layout -------------------------------------------------------------------------
    def _text_stream(self):
        raw = pa.OSFile(self.path, "rb")
        self._raw, self._delivered = raw, None
        if self.compression:
            self._delivered = CountingReader(pa.CompressedInputStream(raw, self.compression))
            return self._delivered
        if self.stop is not None:
            return ByteRange(raw, self.start, self.stop)
        return raw

    def split(self, parts: int) -> list["InputFile"]:
        """This file as ``parts`` byte ranges cut at line ends (itself when it is compressed,
        not text or small); later parts have no header and take the first part's names."""
        if (parts < 2 or self.format not in TEXT_FORMATS or self.compression
                or self.size < SPLIT_BYTES):
            return [self]
        schema = self.schema()
        names = schema.names
        # Later parts take the column types seen at the start of the file rather than guess
        # from their own first block: every part then yields the same schema.
        types = {f.name: f.type for f in schema if not pa.types.is_null(f.type)}
        cuts = [0]
        with open(self.path, "rb") as f:
            for i in range(1, parts):
                f.seek(max(self.size * i // parts, cuts[-1]))
                f.readline()
                cuts.append(min(f.tell(), self.size))
        cuts.append(self.size)
        pieces = []
        for i in range(parts):
            if cuts[i + 1] <= cuts[i]:
                continue
            piece = copy.copy(self)
            piece.start, piece.stop, piece.size = cuts[i], cuts[i + 1], cuts[i + 1] - cuts[i]
            if i:
                piece.header, piece.names, piece.types = False, names, types
            pieces.append(piece)
        return pieces

    def line_offset(self) -> int:
        """Lines of the file before this part (0 for a whole file)."""
        count, left = 0, self.start
        with open(self.path, "rb") as f:
            while left:
                chunk = f.read(min(left, 1 << 24))
                count += chunk.count(b"\n")
                left -= len(chunk)
        return count

    def _layout(self, layout: TextLayout) -> tuple[str, bool]:
        delimiter, header = self._delimiter(layout), layout.header
        if header is None:
            header = self.format in ("csv", "tsv") and not self._first_line_is_data(delimiter)
        return delimiter, header

    def _first_line_is_data(self, delimiter: str) -> bool:
        """Whether a CSV/TSV file's first line holds numbers only (then it is read as data,
        with a warning, rather than silently taken as column names)."""
        head = self._head()
        line = next((ln for ln in head.splitlines() if ln.strip()), b"")
        fields = line.decode("utf-8", "replace").strip("\r").split(delimiter)
        try:
            [float(f) for f in fields]
        except ValueError:
            return False
        if len(fields) < 2:
            return False
        warnings.warn(IngestWarning(
            f"{self.shown}: the first line ({excerpt(line.decode('utf-8', 'replace'))}) holds only "
            "numbers, so it is read as data, not as column names; pass --header (header=True, "
            "HEADER true) if it names the columns, --no-header to silence this"), stacklevel=2)
        return True

    def _delimiter(self, layout: TextLayout) -> str:
        delimiter = layout.delimiter
        if delimiter is not None:
            delimiter = {"\\t": "\t", "tab": "\t", "space": " "}.get(delimiter, delimiter)
            if len(delimiter) != 1:
                raise IngestError(f"the delimiter must be one character, not {delimiter!r}",
                                  file=self.shown)
            return delimiter
        if self.format == "csv":
            return ","
        if self.format == "tsv":
            return "\t"
        # SNAP text and Graphalytics: tab or space, as the first data line shows.
        head = self._head()
        for line in head.splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith((b"#", b"%")):
                return "\t" if b"\t" in line else " "
        if len(head) < (1 << 16):
            raise IngestError("file has no data lines (only comments or blank lines)",
                              file=self.shown)
        return "\t"

    # -- batches -----------------------------------------------------------------------------
    def batches(self, column_types: dict | None = None) -> Iterator[pa.RecordBatch]:
        if self.format == "parquet":
            yield from self._parquet_batches()
        elif self.format == "arrow":
            yield from self._ipc_batches()
        else:
            yield from self._text_batches(column_types or {})

    def _text_batches(self, column_types: dict) -> Iterator[pa.RecordBatch]:
        import pyarrow.csv as pacsv  # here, not at the top: it costs ``import graphdb`` ~50 ms

        stream = self._text_stream()
        if self.format in ("txt", "graphalytics"):
            stream = CommentFilter(stream)
        read = pacsv.ReadOptions(block_size=self.block_bytes)
        parse = pacsv.ParseOptions(delimiter=self.delimiter)
        convert = pacsv.ConvertOptions(column_types={**self.types, **column_types},
                                       null_values=NULL_VALUES)
        if not self.header:
            # Name the columns up front so that column_types can refer to src/dst/weight.
            read = pacsv.ReadOptions(block_size=self.block_bytes,
                                     column_names=self.names or self._noheader_names())
        try:
            reader = pacsv.open_csv(stream, read_options=read, parse_options=parse,
                                    convert_options=convert)
            rows = 0
            self._batches = 0
            for batch in reader:
                if any(pa.types.is_binary(t) for t in batch.schema.types):
                    # pyarrow reads a column that is not UTF-8 as bytes: name the line
                    raise self.parse_error(None)
                rows += batch.num_rows
                self._rows_done = rows
                self._batches += 1
                yield batch
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            if "to int32" in str(exc):  # ids asked for as 32-bit integers, and one is not
                raise NarrowIdsOverflow(str(exc)) from None
            raise self.parse_error(exc) from None
        except OSError as exc:  # a damaged or cut short compressed file, a failing disk
            raise self.read_error(exc) from None
        finally:
            stream.close()
        if rows == 0 and self.start == 0 and not self.may_be_empty:
            raise IngestError("file has a header but no rows" if self.header
                              else "file has no data lines", file=self.shown)

    def _head(self) -> bytes:
        """The first 64 KiB of the text (decompressed)."""
        try:
            with self._text_stream() as stream:
                return stream.read(1 << 16)
        except OSError as exc:
            raise self.read_error(exc) from None

    def _noheader_names(self) -> list[str]:
        head = self._head()
        fields = 2
        for line in head.splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith((b"#", b"%")):
                fields = len(line.rstrip(b"\r").split(self.delimiter.encode()))
                break
        names = ["src", "dst", "weight"][:fields]
        return names + [f"column{i + 1}" for i in range(len(names), fields)]

    @property
    def batch_rows(self) -> int:
        """Rows of a Parquet or Arrow batch: as many as half a text block's bytes (the memory
        limit's share for one block), at least 8192."""
        return max(8192, self.block_bytes // 2)

    def _parquet_batches(self) -> Iterator[pa.RecordBatch]:
        import pyarrow.parquet as pq

        try:
            # Streamed: column chunks read through a buffer of a block's size, not pre-read
            # whole (a file of one row group would otherwise be held entire).
            pf = pq.ParquetFile(self.path, buffer_size=self.block_bytes, pre_buffer=False)
            self._rows_total = pf.metadata.num_rows
            if self._rows_total == 0 and not self.may_be_empty:
                raise IngestError("file has no rows", file=self.shown)
            # Columns decoded in parallel only with room for it: the threads' buffers took
            # 14-18 MiB more at any limit (a 4 M-row file: 100 against 84 MiB peak).
            threads = self.block_bytes >= BLOCK_BYTES
            for batch in pf.iter_batches(batch_size=self.batch_rows, use_threads=threads):
                self._rows_done += batch.num_rows
                yield batch
        except (pa.ArrowInvalid, OSError) as exc:
            raise IngestError(f"not a readable Parquet file: {_first_line(exc)}",
                              file=self.shown) from None

    def _ipc_batches(self) -> Iterator[pa.RecordBatch]:
        """The batches of an Arrow IPC file (or stream), memory-mapped: zero copies, cut into
        slices of ``batch_rows``, and the mapping's pages released as the file is read, so a
        file of one huge batch is not resident whole."""
        from graphdb.storage.mapped import release_file

        released = 0
        try:
            with pa.memory_map(self.path) as source:
                try:
                    reader = pa.ipc.open_file(source)
                    count = reader.num_record_batches
                    batches = (reader.get_batch(i) for i in range(count))
                    # (mapped: counting rows reads batch headers, not their data)
                    self._rows_total = sum(reader.get_batch(i).num_rows for i in range(count))
                except pa.ArrowInvalid:
                    source.seek(0)
                    batches = pa.ipc.open_stream(source)
                any_rows = False
                for batch in batches:
                    for start in range(0, batch.num_rows, self.batch_rows):
                        piece = batch.slice(start, self.batch_rows)
                        self._rows_done += piece.num_rows
                        any_rows = True
                        yield piece
                        released += piece.nbytes
                        if released >= 8 * self.block_bytes:
                            release_file(self.path)  # read: page cache, not ours
                            released = 0
                if not any_rows and not self.may_be_empty:
                    raise IngestError("file has no rows", file=self.shown)
        except (pa.ArrowInvalid, OSError) as exc:
            raise IngestError(f"not a readable Arrow IPC file: {_first_line(exc)}",
                              file=self.shown) from None

    def schema(self) -> pa.Schema:
        """The file's columns, from its first batch."""
        return self.first_batch().schema

    def first_batch(self) -> pa.RecordBatch:
        """The file's first batch (read with small blocks: the reader reads ahead many blocks,
        and only the columns' names, kinds and first values are wanted here)."""
        block, self.block_bytes = self.block_bytes, min(self.block_bytes, 64 << 10)
        try:
            for batch in self.batches():
                return batch
        finally:
            self.block_bytes = block
            self._rows_done = self._batches = 0
        if self.may_be_empty:
            schema = self._schema_without_rows()
            return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema],
                                              schema=schema)
        raise IngestError("file has no rows", file=self.shown)

    def _schema_without_rows(self) -> pa.Schema:
        """The columns of a file with no rows (Parquet's schema, a CSV header's names)."""
        if self.format == "parquet":
            import pyarrow.parquet as pq

            return pq.read_schema(self.path)
        if self.format == "arrow":  # (a property graph's edge table without rows)
            with pa.memory_map(str(self.path)) as source:
                try:
                    return pa.ipc.open_file(source).schema
                except pa.ArrowInvalid:
                    return pa.ipc.open_stream(source).schema
        if self.format in TEXT_FORMATS and self.header:
            import pyarrow.csv as pacsv

            stream = self._text_stream()
            try:
                names = pacsv.open_csv(stream, parse_options=pacsv.ParseOptions(
                    delimiter=self.delimiter)).schema.names
            finally:
                stream.close()
            return pa.schema([(n, pa.int64()) for n in names])
        return pa.schema([("src", pa.int64()), ("dst", pa.int64())])

    # -- progress and errors -----------------------------------------------------------------
    def bytes_done(self) -> int:
        """Bytes of the file consumed so far (compressed bytes for a compressed file)."""
        raw = self._raw
        if raw is not None and not raw.closed:
            try:
                consumed = min(max(raw.tell() - self.start, 0), self.size)
            except (pa.ArrowInvalid, OSError, ValueError):
                # A part's reader thread closed the file between the check and tell(): the
                # progress display asked from another thread; the part is read.
                return self.size
            # The reader reads tens of blocks ahead of what it has parsed (and a compressed
            # stream reads ahead of that): count what was parsed, one block per batch, in the
            # file's bytes (for a compressed file, by the compression ratio so far).
            delivered = self._delivered.count if self._delivered is not None else consumed
            if not delivered:
                return consumed
            parsed = min(self._batches * self.block_bytes, delivered)
            return int(parsed * consumed / delivered)
        if self._rows_total:
            return int(self.size * self._rows_done / self._rows_total)
        return self.size if self._rows_done else 0

    def where(self, row: int) -> tuple[int | None, str]:
        """(line, prefix) naming data row ``row`` (0-based) of the file in an error message."""
        if self.format in TEXT_FORMATS:
            line = line_of_data_row(self._open_text_lines(), row, self.header, self._comments)
            return (None if line is None else line + self.line_offset()), ""
        return None, f"row {row + 1}: "

    def error_at(self, row: int, problem: str) -> IngestError:
        line, prefix = self.where(row)
        return IngestError(prefix + problem, file=self.shown, line=line)

    def read_error(self, exc: OSError) -> IngestError:
        """The error of a file that cannot be read to its end: for a compressed file, the line
        where its data stops making sense (a rescan counts the lines before it)."""
        if not self.compression:
            return IngestError(f"cannot read the file: {_first_line(exc)}", file=self.shown)
        lines = _lines_before_damage(self.path, self.compression)
        return IngestError(f"the {self.compression} data is damaged or cut short "
                           f"({_first_line(exc)}); {lines:,} complete lines come before it",
                           file=self.shown, line=lines + 1)

    def parse_error(self, exc: Exception | None) -> IngestError:
        line, problem = first_bad_line(self._open_text_lines(), self.delimiter, self.header,
                                       self._comments)
        line = None if line is None else line + self.line_offset()
        message = str(exc or "not valid UTF-8 text").replace("CSV parse error: ", "").replace(
            "CSV conversion error", "")
        return IngestError(problem or message.strip(), file=self.shown, line=line)

    def field_texts(self, rows: list[int], column: str) -> dict[int, str]:
        """Column ``column`` of data rows ``rows`` as the text file writes them (in one scan):
        what values parsed as numbers looked like before they were rounded."""
        if self.format not in TEXT_FORMATS:
            return {}
        names = self.names or self.schema().names
        if column not in names:
            return {}
        return fields_of_data_rows(self._open_text_lines(), set(rows), self.header,
                                   self._comments, self.delimiter, names.index(column))

    @property
    def _comments(self) -> bool:
        return self.format in ("txt", "graphalytics")

    def _open_text_lines(self):
        """The file's lines, decompressed, for the error-locating rescans."""
        if self.stop is not None:
            stream = ByteRange(pa.OSFile(self.path, "rb"), self.start, self.stop)
        else:
            stream = pa.input_stream(self.path, compression=self.compression)
        return io.BufferedReader(NativeRaw(stream))  # lines of bytes: textscan decodes them


class InputFiles:
    """One input named by a path or a glob pattern: the files' batches one after the other, or
    with ``parallel`` parts, the parts' batches as they come (tagged with the part's number)."""

    def __init__(self, pattern: str, fmt: str = "auto", layout: TextLayout = TextLayout(),
                 block_bytes: int | None = None, spool_dir: Path | None = None):
        self.pattern = str(pattern)
        shown = None
        if is_stream(self.pattern) and spool_dir is not None:  # standard input, a pipe
            shown = shown_name(self.pattern)
            paths = [spool_stream(self.pattern, spool_dir, fmt)]
        elif any(ch in self.pattern for ch in "*?[") and not os.path.exists(self.pattern):
            paths = sorted(globmod.glob(os.path.expanduser(self.pattern)))
            paths = [p for p in paths if os.path.isfile(p)]
            if not paths:
                raise IngestError("no file matches the pattern", file=self.pattern)
        else:
            paths = [self.pattern]
        self.files = [InputFile(p, fmt, layout, block_bytes, shown) for p in paths]
        self.parts = list(self.files)
        self.total_bytes = sum(f.size for f in self.files)

    def __str__(self) -> str:
        return self.pattern if len(self.files) > 1 else self.files[0].shown

    def estimated_rows(self) -> int:
        """Rows the input holds, from Parquet and Arrow metadata, else from its size (16 bytes
        a line of text, three times that compressed): what decides loading compiled kernels."""
        total = 0
        for f in self.files:
            if f.format == "parquet":
                import pyarrow.parquet as pq

                try:
                    total += pq.ParquetFile(f.path).metadata.num_rows
                    continue
                except (pa.ArrowInvalid, OSError):
                    pass
            total += f.size * (3 if f.compression else 1) // TEXT_BYTES_PER_ROW
        return total

    def split(self, parts: int) -> None:
        """Parse large text files in ``parts`` parallel parts each."""
        self.parts = [piece for f in self.files for piece in f.split(parts)]

    def batches(self, column_types: dict | None = None
                ) -> Iterator[tuple[InputFile, int, pa.RecordBatch, int]]:
        """(file or part, index of the batch's first row in it, batch, part number); every
        file's columns must match the first file's. Batches of one part come in order; with
        several parts, parts interleave (one reader thread each)."""
        first = None
        stream = (self._serial(column_types) if len(self.parts) == 1
                  else _parallel(self.parts, column_types))
        for f, row, batch, part in stream:
            if first is None:
                first = batch.schema.names
            elif batch.schema.names != first:
                raise IngestError(
                    f"columns {', '.join(batch.schema.names)} differ from the first file's "
                    f"({', '.join(first)}) in {self.files[0].shown}", file=f.shown)
            yield f, row, batch, part

    def _serial(self, column_types):
        for part, f in enumerate(self.parts):
            row = 0
            for batch in f.batches(column_types):
                yield f, row, batch, part
                row += batch.num_rows

    def schema(self) -> pa.Schema:
        return self.files[0].schema()

    def bytes_done(self) -> int:
        return sum(f.bytes_done() for f in self.parts)


def _parallel(parts: list[InputFile], column_types) -> Iterator:
    """Each part read by its own thread (pyarrow parses without the GIL); a small queue bounds
    the batches in flight.

    An error in a part stops the parts after it, while the parts before it run on: the error
    raised is the first one in file order, the one a single reader would have reported, not
    whichever thread happened to fail first.
    """
    import queue
    import threading

    items: queue.Queue = queue.Queue(maxsize=2 * len(parts))
    stops = [threading.Event() for _ in parts]

    def produce(part: int, f: InputFile) -> None:
        stop = stops[part]
        try:
            row = 0
            for batch in f.batches(column_types):
                item = (f, row, batch, part)
                row += batch.num_rows
                while not stop.is_set():
                    try:
                        items.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            items.put(("done", part))
        except BaseException as exc:  # handed to the consumer
            items.put(("error", part, exc))

    threads = [threading.Thread(target=produce, args=(i, f), daemon=True)
               for i, f in enumerate(parts)]
    for t in threads:
        t.start()
    running = set(range(len(parts)))
    failed: tuple[int, BaseException] | None = None  # the earliest part that failed so far
    try:
        while running:
            item = items.get()
            if item[0] == "done":
                running.discard(item[1])
            elif item[0] == "error":
                part, exc = item[1], item[2]
                running.discard(part)
                if failed is None or part < failed[0]:
                    failed = (part, exc)
                    for later in range(part + 1, len(parts)):
                        stops[later].set()
                        running.discard(later)
            elif failed is None or item[3] < failed[0]:
                yield item
        if failed is not None:
            raise failed[1]
    finally:
        for stop in stops:
            stop.set()
        while any(t.is_alive() for t in threads):
            try:
                items.get(timeout=0.05)
            except queue.Empty:
                pass
