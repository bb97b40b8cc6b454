"""How a partitioned operator's vertex state reaches the ranks whose edges read it.

Each rank computes the new values of the vertices it owns; its rows then read values of any
vertex. Two strategies (GTS's two multi-GPU strategies, applied to state exchange):

- :class:`Replicated` (Strategy-P): the full vector on every rank, rebuilt each step by an
  allgatherv of the owned slices; a rank receives ``(|V| - own) * itemsize`` bytes a step and
  holds |V| values. The default: one collective, no index translation.
- :class:`Split` (Strategy-S): a rank holds its owned values and the *ghosts*, the remote
  vertices its rows read; each step the owners send exactly those (one alltoallv, the request
  lists exchanged once). For state that does not fit one device, or rows that read few remote
  vertices.

Both give the operator a ``columns`` translation (its rows' neighbour ids into indices of the
vector it receives) and ``exchange(owned) -> vector`` per local rank.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .partitioned import Team

__all__ = ["Replicated", "Split", "exchange_for"]


class Replicated:
    """The whole vector on every rank (allgatherv of the owned slices)."""

    strategy = "replicated"

    def __init__(self, team: Team, columns: list):
        self.team = team
        self.columns = columns  # global ids index the full vector as they are

    def exchange(self, owned: list) -> list:
        return self.team.replicate(owned)

    def vector_bytes(self, itemsize: int) -> list[int]:
        return [self.team.n * itemsize for _ in self.team.parts]


class Split:
    """Owned values and ghosts (the remote vertices a rank's rows read), exchanged by owner."""

    strategy = "split"

    def __init__(self, team: Team, columns: list):
        self.team = team
        xp = team.xp

        def ghosts_of(i, part, cols):
            distinct = xp.unique(cols)
            return distinct[(distinct < part.lo) | (distinct >= part.hi)]  # sorted, so by owner

        ghosts = team.map(ghosts_of, columns)
        routed = team.route(ghosts)
        # What each owner sends every step: its values at the requested ids, grouped by the
        # requesting rank (the order the requests came in: ascending ids per rank).
        self._send_index = team.map(lambda i, part, ids: ids - part.lo, routed.ids)
        self._send_counts = routed.counts
        self._recv_counts = routed.sent
        self.ghosts = ghosts

        def compact(i, part, cols, ghost):
            own = (cols >= part.lo) & (cols < part.hi)
            slot = part.size + xp.searchsorted(ghost, cols)
            return xp.where(own, cols - part.lo, slot)

        self.columns = team.map(compact, columns, ghosts)

    def exchange(self, owned: list) -> list:
        team = self.team
        sent = team.map(lambda i, part, values, index: values[index], owned, self._send_index)
        received, _ = team.comm.alltoallv(sent, self._send_counts, self._recv_counts)
        return team.map(lambda i, part, mine, theirs: team.xp.concatenate((mine, theirs)),
                        owned, received)

    def vector_bytes(self, itemsize: int) -> list[int]:
        return [(p.size + int(g.shape[0])) * itemsize for p, g in zip(self.team.parts,
                                                                       self.ghosts)]


def exchange_for(strategy: str, team: Team, columns: list) -> Any:
    """The exchange of ``strategy`` (``replicated`` or ``split``) over rows reading
    ``columns`` (per local rank, the neighbour ids its rows read)."""
    return {"replicated": Replicated, "split": Split}[strategy](team, columns)


def owned_range(xp, part) -> Any:
    """Global ids of a part's vertices."""
    return xp.arange(part.lo, part.hi, dtype=np.int64)
