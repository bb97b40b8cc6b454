// Unified Degree Cut (EtaGraph): a frontier is a list of pieces (vertex, piece number), each
// piece at most K consecutive edges of the vertex's CSR row, one thread per piece. The pieces of
// a vertex are appended when it is activated, so no separate expansion pass runs per level and
// the stored CSR is never preprocessed.
#pragma once
#include "graphdb/common.cuh"

namespace graphdb {

__device__ __forceinline__ i64 num_pieces(i64 degree, int K) { return (degree + K - 1) / K; }

// Append vertex v's `count` pieces at slots [base, base + count). A lane with a few pieces
// writes them itself; the long runs of hub vertices are written by the whole warp together,
// so one hub does not serialise a lane for thousands of stores. All 32 lanes must call it.
template <typename Id>
__device__ __forceinline__ void write_pieces(Id v, u64 base, i64 count, Id* queue_vertex,
                                             int* queue_piece) {
  const int SMALL = 4;
  if (count <= SMALL) {
    for (i64 p = 0; p < count; ++p) {
      queue_vertex[base + p] = v;
      queue_piece[base + p] = (int)p;
    }
  }
  unsigned big = __ballot_sync(GRAPHDB_FULL_MASK, count > SMALL);
  while (big) {
    const int src = __ffs(big) - 1;
    big &= big - 1;
    const Id bv = __shfl_sync(GRAPHDB_FULL_MASK, v, src);
    const u64 bbase = __shfl_sync(GRAPHDB_FULL_MASK, base, src);
    const i64 bcount = __shfl_sync(GRAPHDB_FULL_MASK, count, src);
    for (i64 p = lane_id(); p < bcount; p += 32) {
      queue_vertex[bbase + p] = bv;
      queue_piece[bbase + p] = (int)p;
    }
  }
}

// Warp-collective append of each lane's pieces to the queue whose length is *length.
template <typename Id>
__device__ __forceinline__ void append_pieces(Id v, i64 count, u64* length, Id* queue_vertex,
                                              int* queue_piece) {
  if (!__any_sync(GRAPHDB_FULL_MASK, count > 0)) return;
  const u64 base = warp_reserve(length, (u64)count);
  write_pieces(v, base, count, queue_vertex, queue_piece);
}

// Edge range [start, start + len) of a queued piece.
template <typename Id>
__device__ __forceinline__ void piece_range(const i64* offsets, Id v, int piece, int K,
                                            i64& start, int& len) {
  const i64 s = offsets[v] + (i64)piece * K;
  const i64 e = offsets[v + 1];
  start = s;
  len = (int)((e - s) < K ? (e - s) : K);
}

// Shared-memory staging (EtaGraph's SMP): the warp copies the edges of its 32 pieces into
// shared memory, 32/K pieces per load instruction with K consecutive lanes on each piece, so a
// load reads whole contiguous segments instead of 32 scattered addresses; each lane then walks
// its own piece out of shared memory. K is a power of two <= 32. Rows are padded to K + 1
// entries so that lanes reading "their" row at the same column hit different banks.
template <typename Id, bool WEIGHTED>
__device__ __forceinline__ void stage_pieces(i64 my_start, int my_len, int K, const Id* targets,
                                             const double* weights, Id* s_ids, double* s_w) {
  const int per_round = 32 / K;
  const int sub = lane_id() / K;
  const int col = lane_id() % K;
  for (int j0 = 0; j0 < 32; j0 += per_round) {
    const int j = j0 + sub;
    const i64 st = __shfl_sync(GRAPHDB_FULL_MASK, my_start, j);
    const int ln = __shfl_sync(GRAPHDB_FULL_MASK, my_len, j);
    if (col < ln) {
      s_ids[j * (K + 1) + col] = targets[st + col];
      if (WEIGHTED) s_w[j * (K + 1) + col] = weights[st + col];
    }
  }
  __syncwarp();
}

}  // namespace graphdb
