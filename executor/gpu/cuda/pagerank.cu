// Cache-blocked PageRank (GraphCage's TOCAB) with the Graphalytics semantics.
//
// Pull: the in-CSR is cut by *source* range into blocks whose source values (float32
// contributions rank/outdeg) fit in about a third of L2, so the random reads of one block hit
// L2. Each block keeps only its non-empty rows: id_map (destination ids, ascending), rowptr
// (int64, local) and a dense float partial sum per row. One merge kernel then walks vertex ranges
// of RANGE ids, adds every block's partials of that range in shared memory (coalesced reads,
// because id_map is sorted) and applies the PageRank update.
// Push: the out-CSR is cut by *destination* range instead; rows are sources, and atomics into a
// dense sum array stay inside the L2-resident destination range; the same merge kernel applies
// the update from the dense sums.
// Rows longer than `heavy` edges (RMAT hubs) are cut into pieces of `chunk` edges, one thread
// block per piece, so one hub does not serialise a thread for a million edges.
#include "include/graphdb_common.cuh"

using namespace graphdb;

#define RANGE 1024

// rows[k] = the CSR row of edge k (the partition's grouping key); one warp per row.
template <typename Id>
__global__ void graphdb_pagerank_edge_rows(const i64* offsets, i64 n, Id* rows) {
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 num_warps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 v = warp; v < n; v += num_warps)
    for (i64 k = offsets[v] + lane_id(); k < offsets[v + 1]; k += 32) rows[k] = (Id)v;
}

// Column ids are read exactly once per iteration: with `hints` they are loaded with the
// streaming (evict-first) policy so that they do not push the block's contributions, which are
// read again and again, out of L2 and L1.
template <typename Id>
__device__ __forceinline__ Id load_col(const Id* cols, i64 k, int hints) {
  return hints ? __ldcs(cols + k) : cols[k];
}

// Sum of contrib[cols[k]] for k = first, first + step, ... < end, UNROLL loads in flight per
// thread: the gathers are L2 hits but each still costs a round trip, and one outstanding load
// per thread leaves the SM idle most of the time.
template <typename Id, int UNROLL>
__device__ __forceinline__ float gather_sum(const Id* cols, i64 first, i64 end, int step,
                                            const float* contrib, int hints) {
  float acc = 0.0f;
  for (i64 k = first; k < end; k += (i64)UNROLL * step) {
    Id c[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const i64 kk = k + (i64)u * step;
      c[u] = kk < end ? load_col(cols, kk, hints) : Id(-1);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (c[u] >= 0) acc += contrib[c[u]];
  }
  return acc;
}

// Light rows, G lanes per row (CSR-vector): the G lanes read consecutive column ids, so a row's
// edges arrive in whole sectors instead of one scattered load per thread. G is picked per block
// so that a lane has about UNROLL edges of a mean row; the next row's bounds are loaded before
// the current row is summed, so rows overlap. Rows longer than `heavy` go to the heavy kernel.
template <typename Id, bool PUSH, int G>
__global__ void graphdb_pagerank_rows(const i64* rowptr, const Id* id_map, const Id* cols,
                                      i64 n_rows, int heavy, const float* contrib, float* out,
                                      int hints) {
  const int sub = threadIdx.x & (G - 1);
  const unsigned group_mask = (G == 32 ? GRAPHDB_FULL_MASK : ((1u << G) - 1))
                              << ((threadIdx.x & 31) & ~(G - 1));
  const i64 groups = (i64)gridDim.x * blockDim.x / G;
  i64 l = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / G;
  i64 s = 0, e = 0;
  if (l < n_rows) { s = rowptr[l]; e = rowptr[l + 1]; }
  for (; l < n_rows; l += groups) {
    const i64 next = l + groups;
    i64 s_next = 0, e_next = 0;
    if (next < n_rows) { s_next = rowptr[next]; e_next = rowptr[next + 1]; }
    if (e - s > heavy) {
      if (!PUSH && sub == 0) out[l] = 0.0f;  // the heavy kernel, launched next, adds the pieces
    } else if (PUSH) {
      const float value = contrib[id_map[l]];
      for (i64 k = s + sub; k < e; k += G) atomicAdd(&out[load_col(cols, k, hints)], value);
    } else {
      float acc = gather_sum<Id, 4>(cols, s + sub, e, G, contrib, hints);
      for (int d = G / 2; d > 0; d >>= 1) acc += __shfl_xor_sync(group_mask, acc, d);
      if (sub == 0) out[l] = acc;
    }
    s = s_next;
    e = e_next;
  }
}

template <typename Id, bool PUSH>
__global__ void graphdb_pagerank_heavy(const i64* rowptr, const Id* id_map, const Id* cols,
                                       const i64* piece_row, const i64* piece_start,
                                       i64 n_pieces, int chunk, const float* contrib, float* out,
                                       int hints) {
  for (i64 p = blockIdx.x; p < n_pieces; p += gridDim.x) {
    const i64 l = piece_row[p];
    const i64 s = piece_start[p];
    const i64 row_end = rowptr[l + 1];
    const i64 e = s + chunk < row_end ? s + chunk : row_end;
    if (PUSH) {
      const float value = contrib[id_map[l]];
      for (i64 k = s + threadIdx.x; k < e; k += blockDim.x)
        atomicAdd(&out[load_col(cols, k, hints)], value);
    } else {
      float acc = gather_sum<Id, 8>(cols, s + threadIdx.x, e, blockDim.x, contrib, hints);
      acc = block_sum(acc);
      if (threadIdx.x == 0) atomicAdd(&out[l], acc);
    }
  }
}

// One thread block per range of RANGE vertices: sum the blocks' partials (and/or the dense push
// sums) in shared memory, then PR'(v) = (1-d)/n + d * (sum + D/n) with D the dangling rank of
// the previous ranks. Writes the new rank, the next contribution, the next D and the L1 change.
// scal[0..2] rotate like the frontier counters: iteration `it` reads D from scal[it % 3], adds
// the next D into scal[(it + 1) % 3] and zeroes scal[(it + 2) % 3].
template <typename Id>
__global__ void graphdb_pagerank_merge_apply(int n_blocks, const i64* range_ptr,
                                             const Id* id_map, const float* partial,
                                             int use_dense, float* dense, i64 n, const int* out_degree,
                                             double damping, double* rank, float* contrib,
                                             double* scal, double* l1, int it) {
  __shared__ double acc[RANGE];
  const i64 n_ranges = (n + RANGE - 1) / RANGE;
  if (blockIdx.x == 0 && threadIdx.x == 0) scal[(it + 2) % 3] = 0.0;
  const double dangling = scal[it % 3];
  const double base = (1.0 - damping) / (double)n + damping * dangling / (double)n;
  double dangling_next = 0.0, change = 0.0;
  for (i64 r = blockIdx.x; r < n_ranges; r += gridDim.x) {
    const i64 v0 = r * RANGE;
    for (int j = threadIdx.x; j < RANGE; j += blockDim.x) {
      double x = 0.0;
      if (use_dense && v0 + j < n) {
        x = dense[v0 + j];
        dense[v0 + j] = 0.0f;  // ready for the next iteration's atomics
      }
      acc[j] = x;
    }
    __syncthreads();
    for (int b = 0; b < n_blocks; ++b) {
      const i64 lo = range_ptr[(i64)b * (n_ranges + 1) + r];
      const i64 hi = range_ptr[(i64)b * (n_ranges + 1) + r + 1];
      // ids are unique within one block, so the threads of one pass touch distinct entries
      for (i64 i = lo + threadIdx.x; i < hi; i += blockDim.x) acc[id_map[i] - v0] += partial[i];
      __syncthreads();
    }
    for (int j = threadIdx.x; j < RANGE; j += blockDim.x) {
      const i64 v = v0 + j;
      if (v >= n) break;
      const double fresh = base + damping * acc[j];
      const int deg = out_degree[v];
      change += fabs(fresh - rank[v]);
      rank[v] = fresh;
      contrib[v] = deg ? (float)(fresh / (double)deg) : 0.0f;
      if (!deg) dangling_next += fresh;
    }
    __syncthreads();  // acc is reused by the next range
  }
  dangling_next = block_sum(dangling_next);
  change = block_sum(change);
  if (threadIdx.x == 0) {
    atomicAdd(&scal[(it + 1) % 3], dangling_next);
    atomicAdd(&l1[it], change);
  }
}
