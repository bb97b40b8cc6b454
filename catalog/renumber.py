"""Raw integer ids to dense internal ids: the ids that occur, numbered in ascending order.

Integer user ids that are non-negative and not too spread out (an R-MAT edge list, most
datasets) are sorted by their own value: an ingest sorts the edges by the raw id and drops the
ids that never occur afterwards. Because internal ids are assigned in ascending order of the
user's ids, renumbering is monotone, so a CSR sorted by raw id is already sorted by internal id.
:class:`Renumber` is that renumbering, in one of two forms:

* a lookup table (``lut[raw] = internal``, 4 bytes per raw id) when the edges are sorted in
  memory anyway (it is what the compiled scatter renumbers through);
* a rank/select bitmap (a bit per raw id plus a running count per 64 ids: 0.19 bytes per raw
  id) when they are sorted in buckets under a memory limit: the one structure of the size of the
  id space that a bounded ingest keeps.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = ["KEYS_AT_ONCE", "Renumber", "internal_dtype", "mark_bits"]

#: Keys looked at a time when counting or listing present keys (a byte, then 8, per key).
KEYS_AT_ONCE = 1 << 18


def internal_dtype(n: int) -> np.dtype:
    return np.dtype(np.int32) if n < 2**31 else np.dtype(np.int64)


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits of each uint64 (numpy 2's bitwise_count where present)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words)
    return _BYTE_BITS[words.view(np.uint8).reshape(-1, 8)].sum(axis=1, dtype=np.uint8)


def mark_bits(bits: np.ndarray, keys: np.ndarray) -> None:
    """Set the bit of every key (bit ``k % 64`` of word ``k // 64``)."""
    if len(keys):
        keys = keys.astype(np.uint64, copy=False)
        np.bitwise_or.at(bits, keys >> np.uint64(6),
                         np.left_shift(np.uint64(1), keys & np.uint64(63)))


class Renumber:
    """Keys ``0..span-1`` -> internal ids ``0..n-1`` in key order, for the keys present."""

    def __init__(self, span: int, n: int, *, lut: np.ndarray | None = None,
                 bits: np.ndarray | None = None, present: np.ndarray | None = None):
        self.span, self.n = span, n
        self.dtype = internal_dtype(n)
        self.lut = lut  # raw -> internal (kernels renumber through it); None: another form
        self._bits = bits  # rank/select form: a bit per key ...
        self._prefix = None  # ... and the set bits before each word
        self._present = present  # lut form: which keys are present (bool per key)
        if bits is not None:
            counts = _popcount(bits)
            self._prefix = np.zeros(len(bits), dtype=np.int64)
            np.cumsum(counts[:-1], out=self._prefix[1:])

    @property
    def identity(self) -> bool:
        """Every key is present: the keys are the internal ids."""
        return self.n == self.span

    @classmethod
    def everything(cls, span: int) -> "Renumber":
        return cls(span, span)

    @classmethod
    def from_present(cls, present: np.ndarray) -> "Renumber":
        """From a bool per key; a lookup table unless every key is present."""
        n = int(np.count_nonzero(present))
        if n == len(present):
            return cls.everything(n)
        lut = np.cumsum(present, dtype=internal_dtype(n))
        lut -= 1
        return cls(len(present), n, lut=lut, present=present)

    @classmethod
    def from_bits(cls, bits: np.ndarray, span: int) -> "Renumber":
        """From a bitmap (see :func:`mark_bits`) of ``span`` keys: the rank/select form."""
        whole, rest = divmod(span, 64)
        if rest:  # bits past the span stay clear
            bits[whole] &= np.uint64((1 << rest) - 1)
        bits[whole + (1 if rest else 0):] = 0
        n = int(_popcount(bits).sum(dtype=np.int64))
        if n == span:
            return cls.everything(span)
        return cls(span, n, bits=bits)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.lut, self._bits, self._prefix, self._present)
                   if a is not None)

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        """Internal ids of present keys."""
        if self.identity:
            return keys.astype(self.dtype, copy=False)
        if self.lut is not None:
            return np.take(self.lut, keys)
        keys = keys.astype(np.int64, copy=False)
        words = keys >> 6
        below = np.left_shift(np.uint64(1), (keys & 63).astype(np.uint64)) - np.uint64(1)
        below &= self._bits[words]
        ids = self._prefix[words]
        ids += _popcount(below)
        return ids.astype(self.dtype, copy=False)

    def present(self, start: int, stop: int) -> np.ndarray:
        """Which of the keys ``start..stop-1`` are present (bool)."""
        if self.identity:
            return np.ones(stop - start, dtype=bool)
        if self._present is not None:
            return self._present[start:stop]
        first, last = start // 64, -(-stop // 64)
        words = np.ascontiguousarray(self._bits[first:last]).view(np.uint8)
        flags = np.unpackbits(words, bitorder="little").view(bool)  # a byte per key
        return flags[start - 64 * first:stop - 64 * first]

    def count(self, start: int, stop: int) -> int:
        """How many of the keys ``start..stop-1`` are present."""
        if self.identity:
            return stop - start
        return sum(int(np.count_nonzero(self.present(a, min(stop, a + KEYS_AT_ONCE))))
                   for a in range(start, stop, KEYS_AT_ONCE))

    def keys(self, chunk: int = KEYS_AT_ONCE) -> Iterator[np.ndarray]:
        """The present keys in ascending order (int64), at most ``chunk`` keys of the span
        looked at a time: the ``id`` column of the vertex table, written piece by piece."""
        for start in range(0, self.span, chunk):
            stop = min(self.span, start + chunk)
            yield start + np.flatnonzero(self.present(start, stop)).astype(np.int64)
