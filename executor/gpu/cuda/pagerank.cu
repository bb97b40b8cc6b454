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
                                            const float* contrib, int hints,
                                            const float* s_hub, int hub) {
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
      if (c[u] >= 0) acc += c[u] < hub ? s_hub[c[u]] : contrib[c[u]];
  }
  return acc;
}

// Hub cache (with the out-degree relabelling): the contributions of the `hub` hottest sources,
// ids 0..hub-1, are copied into shared memory once per thread block, so the gathers that hit
// them (a fifth to a third of an R-MAT graph's edges) skip L2. hub = 0 disables it.
__device__ __forceinline__ void load_hub(const float* contrib, float* s_hub, int hub) {
  for (int i = threadIdx.x; i < hub; i += blockDim.x) s_hub[i] = contrib[i];
  __syncthreads();
}

// to_dense (pull): instead of a partial per row for the merge, each row's sum is added
// atomically into the dense sums out[id_map[row]] (a native global float atomic, one per row),
// where the tiles add theirs too; the merge then reads only the dense sums (no partials, no
// shared-memory atomics) and zeroes them for the next iteration.
// Light rows, G lanes per row (CSR-vector): the G lanes read consecutive column ids, so a row's
// edges arrive in whole sectors instead of one scattered load per thread. G is picked per block
// so that a lane has about UNROLL edges of a mean row; the next row's bounds are loaded before
// the current row is summed, so rows overlap. Rows longer than `heavy` go to the heavy kernel.
template <typename Id, bool PUSH, int G>
__global__ void graphdb_pagerank_rows(const i64* rowptr, const Id* id_map, const Id* cols,
                                      i64 n_rows, int heavy, const float* contrib, float* out,
                                      int hints, int hub, int to_dense) {
  extern __shared__ float s_hub[];
  if (hub) load_hub(contrib, s_hub, hub);
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
      // the heavy kernel, launched next, adds the pieces
      if (!PUSH && !to_dense && sub == 0) out[l] = 0.0f;
    } else if (PUSH) {
      const float value = contrib[id_map[l]];
      for (i64 k = s + sub; k < e; k += G) atomicAdd(&out[load_col(cols, k, hints)], value);
    } else {
      float acc = gather_sum<Id, 4>(cols, s + sub, e, G, contrib, hints, s_hub, hub);
      for (int d = G / 2; d > 0; d >>= 1) acc += __shfl_xor_sync(group_mask, acc, d);
      if (sub == 0) {
        if (!to_dense) out[l] = acc;
        else if (acc != 0.0f) atomicAdd(&out[id_map[l]], acc);
      }
    }
    s = s_next;
    e = e_next;
  }
}

template <typename Id, bool PUSH>
__global__ void graphdb_pagerank_heavy(const i64* rowptr, const Id* id_map, const Id* cols,
                                       const i64* piece_row, const i64* piece_start,
                                       i64 n_pieces, int chunk, const float* contrib, float* out,
                                       int hints, int hub, int to_dense) {
  extern __shared__ float s_hub[];
  if (hub) load_hub(contrib, s_hub, hub);
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
      float acc = gather_sum<Id, 8>(cols, s + threadIdx.x, e, blockDim.x, contrib, hints, s_hub,
                                    hub);
      acc = block_sum(acc);
      if (threadIdx.x == 0) atomicAdd(&out[to_dense ? (i64)id_map[l] : l], acc);
    }
  }
}

// One thread block of RANGE threads per range of RANGE vertices (a thread per vertex): add
// every block's partials of the range in shared memory, then PR'(v) = (1-d)/n + d * (sum +
// dense[v] + D/n) with D the dangling rank of the previous ranks. Writes the new rank, the next
// contribution, the next D and (with track_change) the L1 change.
// The rows of one block inside one range are distinct vertices, so each block contributes at
// most one partial per thread; the loads of 4 blocks are issued together before their adds,
// because this kernel is bound by round trips, not bytes.
// dense_mode: 0 no dense sums; 1 add dense[v] (the tiles store every tiled column each
// iteration, so it stays valid); 2 add it and zero it for the next iteration's atomics (push,
// atomic tile flushes). dense[v] is loaded with out_degree but used only after the partials,
// and the zero is stored after the apply: a store to the address of this thread's load still in
// flight (the former order: load dense, store 0 at once, then the partials) stalled the merge
// (1.16 ms against 0.25 ms for the same kernel without dense; see NOTES.md).
// range_mode (optional, a byte per range) gives dense_mode per range of RANGE vertices: with
// the tiles, ranges that no tile column covers skip the read, and only ranges of split columns
// flushed with atomics are zeroed. rank_mode: see the apply.
// scal[0..2] rotate like the frontier counters: iteration `it` reads D from scal[it % 3], adds
// the next D into scal[(it + 1) % 3] and zeroes scal[(it + 2) % 3].
#define MERGE_BOUNDS 64
template <typename Id>
__global__ void __launch_bounds__(RANGE)
graphdb_pagerank_merge_apply(int n_blocks, const i64* range_ptr, const Id* id_map,
                             const float* partial, int dense_mode, float* dense, i64 n,
                             const int* out_degree, double damping, double* rank,
                             float* contrib, double* scal, double* l1, int it,
                             int track_change, const unsigned char* range_mode, int rank_mode,
                             const Id* perm) {
  __shared__ float acc[RANGE];
  __shared__ i64 lo_s[MERGE_BOUNDS], hi_s[MERGE_BOUNDS];
  // Read from shared memory at each apply (a barrier always comes first): kept in a register
  // across the range loop and the division's call, it was spilled to local memory.
  __shared__ double s_base;
  const i64 n_ranges = (n + RANGE - 1) / RANGE;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) scal[(it + 2) % 3] = 0.0;
    s_base = (1.0 - damping) / (double)n + damping * scal[it % 3] / (double)n;
  }
  const int t = threadIdx.x;
  double dangling_next = 0.0, change = 0.0;
  for (i64 r = blockIdx.x; r < n_ranges; r += gridDim.x) {
    const i64 v0 = r * RANGE;
    const i64 v = v0 + t;
    const bool valid = v < n;
    // Per range (uniform over the block): no dense sums here (0), stored ones (1), or ones
    // added atomically that must be zeroed after the apply (2).
    const int dmode = range_mode ? (int)range_mode[r] : dense_mode;
    float extra = 0.0f;
    int deg = 0;
    double old = 0.0;
    if (valid) {
      deg = out_degree[v];
      if (track_change) old = rank[v];
      if (dmode) extra = dense[v];  // in flight during the partials, used at the apply
    }
    acc[t] = 0.0f;
    for (int b0 = 0; b0 < n_blocks; b0 += MERGE_BOUNDS) {
      const int nb = n_blocks - b0 < MERGE_BOUNDS ? n_blocks - b0 : MERGE_BOUNDS;
      __syncthreads();  // acc initialised; lo_s/hi_s free
      if (t < nb) {
        lo_s[t] = range_ptr[(i64)(b0 + t) * (n_ranges + 1) + r];
        hi_s[t] = range_ptr[(i64)(b0 + t) * (n_ranges + 1) + r + 1];
      }
      __syncthreads();
      for (int b = 0; b < nb; b += 4) {
        int idx[4];
        float val[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          idx[u] = -1;
          val[u] = 0.0f;
          if (b + u < nb) {
            const i64 i = lo_s[b + u] + t;
            if (i < hi_s[b + u]) {
              idx[u] = (int)(id_map[i] - v0);
              val[u] = partial[i];
            }
          }
        }
#pragma unroll
        for (int u = 0; u < 4; ++u)
          if (idx[u] >= 0) atomicAdd(&acc[idx[u]], val[u]);
      }
    }
    __syncthreads();
    if (valid) {
      const double fresh = s_base + damping * (double)(acc[t] + extra);
      if (track_change) change += fabs(fresh - old);
      // rank_mode 0: ranks not needed yet (fixed iteration count, not the last iteration);
      // 1: rank[v]; 2: the last iteration writes the ranks in the caller's order, perm[v].
      if (rank_mode == 1) rank[v] = fresh;
      else if (rank_mode == 2) rank[perm[v]] = fresh;
      // A reciprocal, not a division: the division's slow-path call made ptxas spill the
      // live accumulators around it.
      contrib[v] = deg ? (float)(fresh * __drcp_rn((double)deg)) : 0.0f;
      if (!deg) dangling_next += fresh;
      if (dmode == 2 && extra != 0.0f) dense[v] = 0.0f;  // ready for the next atomics
    }
    __syncthreads();  // acc is reused by the next range
  }
  dangling_next = block_sum(dangling_next);
  change = block_sum(change);
  if (threadIdx.x == 0) {
    atomicAdd(&scal[(it + 1) % 3], dangling_next);
    if (track_change) atomicAdd(&l1[it], change);
  }
}

// The merge's apply alone, for when every sum is in `dense` (push, or pull with rows_to_dense):
// no partials, so no ranges, shared memory or barriers per range; a thread takes 4 consecutive
// vertices with 16-byte loads (deg, dense) and grid-strides, so many loads are in flight. Same
// update, scal rotation, L1 change and rank_mode as graphdb_pagerank_merge_apply (dense_mode 2:
// the sums are zeroed after use, only where non-zero).
__device__ __forceinline__ float pagerank_apply_one(int deg, float sum, double base,
                                                    double damping, double old, double& fresh,
                                                    int track_change, double& dangling,
                                                    double& change) {
  fresh = base + damping * (double)sum;
  if (track_change) change += fabs(fresh - old);
  if (!deg) dangling += fresh;
  // a reciprocal, as in the merge
  return deg ? (float)(fresh * __drcp_rn((double)deg)) : 0.0f;
}

template <typename Id>
__device__ __forceinline__ void pagerank_apply_dense(float* dense, i64 n, const int* out_degree,
                                                     double damping, double* rank,
                                                     float* contrib, double* scal, double* l1,
                                                     int it, int track_change, int rank_mode,
                                                     const Id* perm) {
  if (blockIdx.x == 0 && threadIdx.x == 0) scal[(it + 2) % 3] = 0.0;
  const double base = (1.0 - damping) / (double)n + damping * scal[it % 3] / (double)n;
  double dangling = 0.0, change = 0.0;
  const i64 quads = n >> 2;
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 q = (i64)blockIdx.x * blockDim.x + threadIdx.x; q < quads; q += stride) {
    const i64 v = q << 2;
    const int4 d = reinterpret_cast<const int4*>(out_degree)[q];
    const float4 s = reinterpret_cast<const float4*>(dense)[q];
    double2 o01 = make_double2(0.0, 0.0), o23 = o01;
    if (track_change) {
      o01 = reinterpret_cast<const double2*>(rank)[2 * q];
      o23 = reinterpret_cast<const double2*>(rank)[2 * q + 1];
    }
    if (s.x != 0.0f || s.y != 0.0f || s.z != 0.0f || s.w != 0.0f)
      reinterpret_cast<float4*>(dense)[q] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    double f0, f1, f2, f3;
    float4 c;
    c.x = pagerank_apply_one(d.x, s.x, base, damping, o01.x, f0, track_change, dangling, change);
    c.y = pagerank_apply_one(d.y, s.y, base, damping, o01.y, f1, track_change, dangling, change);
    c.z = pagerank_apply_one(d.z, s.z, base, damping, o23.x, f2, track_change, dangling, change);
    c.w = pagerank_apply_one(d.w, s.w, base, damping, o23.y, f3, track_change, dangling, change);
    reinterpret_cast<float4*>(contrib)[q] = c;
    if (rank_mode == 1) {
      reinterpret_cast<double2*>(rank)[2 * q] = make_double2(f0, f1);
      reinterpret_cast<double2*>(rank)[2 * q + 1] = make_double2(f2, f3);
    } else if (rank_mode == 2) {
      rank[perm[v]] = f0;
      rank[perm[v + 1]] = f1;
      rank[perm[v + 2]] = f2;
      rank[perm[v + 3]] = f3;
    }
  }
  // the last n % 4 vertices: one thread each
  const i64 g = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (g < (n & 3)) {
    const i64 v = (quads << 2) + g;
    const float s = dense[v];
    if (s != 0.0f) dense[v] = 0.0f;
    double f;
    contrib[v] = pagerank_apply_one(out_degree[v], s, base, damping,
                                    track_change ? rank[v] : 0.0, f, track_change, dangling,
                                    change);
    if (rank_mode == 1) rank[v] = f;
    else if (rank_mode == 2) rank[perm[v]] = f;
  }
  dangling = block_sum(dangling);
  change = block_sum(change);
  if (threadIdx.x == 0) {
    atomicAdd(&scal[(it + 1) % 3], dangling);
    if (track_change) atomicAdd(&l1[it], change);
  }
}

// extern "C" per id type (the module's name expressions list only the templated kernels).
#define GRAPHDB_APPLY_DENSE(NAME, ID)                                                        \
  extern "C" __global__ void NAME(float* dense, i64 n, const int* out_degree, double damping, \
                                  double* rank, float* contrib, double* scal, double* l1,     \
                                  int it, int track_change, int rank_mode, const ID* perm) {  \
    pagerank_apply_dense<ID>(dense, n, out_degree, damping, rank, contrib, scal, l1, it,      \
                             track_change, rank_mode, perm);                                   \
  }
GRAPHDB_APPLY_DENSE(graphdb_pagerank_apply_dense_i32, int)
GRAPHDB_APPLY_DENSE(graphdb_pagerank_apply_dense_i64, i64)

// First contributions, rank 1/n everywhere: contrib[v] = (1/n) / deg (0 for dangling vertices),
// as the merge computes them from a rank (float64, then rounded to float32).
extern "C" __global__ void graphdb_pagerank_init(const int* __restrict__ out_degree, i64 n,
                                                 float* __restrict__ contrib) {
  const double r = 1.0 / (double)n;
  for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n;
       v += (i64)gridDim.x * blockDim.x) {
    const int deg = out_degree[v];
    contrib[v] = deg ? (float)(r / (double)deg) : 0.0f;
  }
}

// Hot-source tiles (pull, after the out-degree relabelling). The edges of the hottest sources
// leave the per-edge gather path: they are grouped into 2-D tiles of (S sources x D
// destinations), each edge packed as dst_local << 16 | src_local (4 bytes, streamed once per
// iteration, coalesced). Tiles are stored column by column (all tiles of one destination range
// together) and each tile is padded with PAD words to a multiple of 8 edges.
// A work item is a run of edges inside one column: its thread block keeps D float accumulators
// in shared memory for the whole item and, tile after tile, stages the tile's S contributions in
// shared memory (one coalesced read), streams the tile's edges and adds each contribution into
// its destination's accumulator. An item that owns its whole column stores the D sums (plain
// coalesced stores, zeros included); the items of a column too large for one block store theirs
// into their own scratch slot, which graphdb_pagerank_tiles_reduce then sums into the column
// (or, with use_scratch = 0, add them with global atomics; with use_scratch = 2 every item adds
// its sums atomically, owner items too, for when the gather kernels add into sums[] as well:
// `to_dense`). The merge kernel adds sums[] to the
// block partials; it zeroes it only for the atomic flush (with stores, every tiled column is
// overwritten each iteration and the untiled ones stay zero).
// Inside a tile the edges are sorted by (dst_local, src_local): a thread takes 8 consecutive
// edges (two 16-byte loads) and adds runs of one destination in a register; its last run is
// reduced across the warp by a segmented scan, so that the hot destinations (which get many
// edges from hot sources, spread over many lanes) cost one shared atomic per warp, not per lane.
// Not templated on the id type (local ids only): extern "C", so no name expression is needed.
#define TILE_PAD 0xffffffffu

// Segmented inclusive scan across a warp whose lanes hold ascending destinations ``cur``: each
// lane ends with the sum of ``acc`` over the lanes up to it with the same destination.
__device__ __forceinline__ float warp_segmented_sum(float acc, unsigned cur, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const float a_up = __shfl_up_sync(GRAPHDB_FULL_MASK, acc, d);
    const unsigned c_up = __shfl_up_sync(GRAPHDB_FULL_MASK, cur, d);
    if (lane >= d && c_up == cur) acc += a_up;
  }
  return acc;
}

// An item's column sums, from shared memory: stored into sums[] (the column's only item), into
// its own scratch slot (one of a split column's items, summed later), or added atomically.
__device__ __forceinline__ void tile_flush(const float* s_dst, int slot, int use_scratch, i64 dst0,
                                           int D, i64 n, float* __restrict__ sums,
                                           float* __restrict__ scratch) {
  const int t = threadIdx.x;
  if (slot < 0 && use_scratch != 2) {
    for (int i = t; i < D && dst0 + i < n; i += blockDim.x) sums[dst0 + i] = s_dst[i];
  } else if (use_scratch == 1) {
    float* out = scratch + (i64)slot * D;
    for (int i = t; i < D; i += blockDim.x) out[i] = s_dst[i];
  } else {
    for (int i = t; i < D && dst0 + i < n; i += blockDim.x) {
      const float v = s_dst[i];
      if (v != 0.0f) atomicAdd(&sums[dst0 + i], v);
    }
  }
}

extern "C" __global__ void __launch_bounds__(1024)
graphdb_pagerank_tiles(const unsigned* __restrict__ edges, const i64* __restrict__ tile_end,
                       const int* __restrict__ tile_src, const i64* __restrict__ item_start,
                       const i64* __restrict__ item_end, const int* __restrict__ item_tile,
                       const int* __restrict__ item_dst, const int* __restrict__ item_slot,
                       i64 n_items, int S, int D, i64 n, const float* __restrict__ contrib,
                       float* __restrict__ sums, float* __restrict__ scratch, int use_scratch) {
  extern __shared__ float tile_smem[];
  float* s_src = tile_smem;
  float* s_dst = tile_smem + S;
  const int t = threadIdx.x;
  const int lane = t & 31;
  for (i64 c = blockIdx.x; c < n_items; c += gridDim.x) {
    const i64 dst0 = item_dst[c];
    const i64 end = item_end[c];
    i64 s = item_start[c];
    int tile = item_tile[c];
    for (int i = t; i < D; i += blockDim.x) s_dst[i] = 0.0f;
    while (s < end) {  // uniform over the block: one tile's part of the item
      const i64 seg_end = tile_end[tile] < end ? tile_end[tile] : end;
      const i64 src0 = tile_src[tile];
      __syncthreads();  // the previous tile's contributions are no longer read
#pragma unroll 4
      for (int i = t; i < S; i += blockDim.x)
        s_src[i] = src0 + i < n ? contrib[src0 + i] : 0.0f;
      __syncthreads();
      for (i64 base = s; base < seg_end; base += 8 * (i64)blockDim.x) {
        const i64 k = base + 8 * (i64)t;
        unsigned cur = TILE_PAD;
        float acc = 0.0f;
        if (k < seg_end) {  // seg_end and k are multiples of 8: all 8 edges are in the tile
          const uint4 a = __ldcs(reinterpret_cast<const uint4*>(edges + k));
          const uint4 b = __ldcs(reinterpret_cast<const uint4*>(edges + k + 4));
          const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            if (w[u] == TILE_PAD) continue;
            const unsigned dst = w[u] >> 16;
            const float v = s_src[w[u] & 0xffffu];
            if (dst == cur) {
              acc += v;
            } else {
              if (cur != TILE_PAD) atomicAdd(&s_dst[cur], acc);
              cur = dst;
              acc = v;
            }
          }
        }
        // The lanes' last runs ascend by destination: segmented inclusive scan, then the last
        // lane of each segment adds the segment's sum.
        acc = warp_segmented_sum(acc, cur, lane);
        const unsigned c_next = __shfl_down_sync(GRAPHDB_FULL_MASK, cur, 1);
        if (cur != TILE_PAD && (lane == 31 || c_next != cur)) atomicAdd(&s_dst[cur], acc);
      }
      s = seg_end;
      ++tile;
    }
    __syncthreads();
    tile_flush(s_dst, item_slot[c], use_scratch, dst0, D, n, sums, scratch);
    __syncthreads();  // shared memory is refilled for the next item
  }
}

// The split columns' slots (consecutive per column) summed into sums[]: coalesced along the
// column, no global atomics.
extern "C" __global__ void graphdb_pagerank_tiles_reduce(const float* __restrict__ scratch,
                                                         const int* __restrict__ col_dst,
                                                         const int* __restrict__ col_slot,
                                                         const int* __restrict__ col_slots,
                                                         int n_cols, int D, i64 n,
                                                         float* __restrict__ sums) {
  const i64 total = (i64)n_cols * D;
  for (i64 x = (i64)blockIdx.x * blockDim.x + threadIdx.x; x < total;
       x += (i64)gridDim.x * blockDim.x) {
    const int c = (int)(x / D);
    const int i = (int)(x - (i64)c * D);
    const i64 v = (i64)col_dst[c] + i;
    if (v >= n) continue;
    const float* p = scratch + (i64)col_slot[c] * D + i;
    float acc = 0.0f;
    for (int k = 0; k < col_slots[c]; ++k) acc += p[(i64)k * D];
    sums[v] = acc;
  }
}

// graphdb_pagerank_tiles with its loads taken off the critical path (same arguments, same
// results). With one 1024-thread block per SM (the tile's shared memory) the first kernel waited
// in turn for each batch of edges (DRAM), for each tile's contributions (L2) and at the barriers
// around them, with nothing else to run on the SM. Here an item's edges are one contiguous
// stream whatever the tiles, so each thread loads its next 8 edges (at the next batch's
// position: the next base, or the next tile's first edge) before it works on the current 8, and
// loads the next tile's contributions into registers (TILE_PRE per thread) while the current
// tile's edges are summed; at the next tile they go from registers to shared memory between the
// two barriers. Words loaded past the current tile's end are not used there: that batch is
// loaded again at the next tile's base (an L2 hit).
#define TILE_PRE 16
__device__ __forceinline__ void tile_load8(const unsigned* __restrict__ edges, i64 k, i64 end,
                                           uint4& a, uint4& b) {
  if (k < end) {
    a = __ldcs(reinterpret_cast<const uint4*>(edges + k));
    b = __ldcs(reinterpret_cast<const uint4*>(edges + k + 4));
  } else {
    a = make_uint4(TILE_PAD, TILE_PAD, TILE_PAD, TILE_PAD);
    b = a;
  }
}

__device__ __forceinline__ void tile_load_pre(const float* __restrict__ contrib, i64 src0, int S,
                                              i64 n, float (&pre)[TILE_PRE]) {
#pragma unroll
  for (int u = 0; u < TILE_PRE; ++u) {
    const int i = threadIdx.x + u * blockDim.x;
    pre[u] = i < S && src0 + i < n ? __ldcg(contrib + src0 + i) : 0.0f;
  }
}

extern "C" __global__ void __launch_bounds__(1024)
graphdb_pagerank_tiles_pipe(const unsigned* __restrict__ edges, const i64* __restrict__ tile_end,
                            const int* __restrict__ tile_src, const i64* __restrict__ item_start,
                            const i64* __restrict__ item_end, const int* __restrict__ item_tile,
                            const int* __restrict__ item_dst, const int* __restrict__ item_slot,
                            i64 n_items, int S, int D, i64 n, const float* __restrict__ contrib,
                            float* __restrict__ sums, float* __restrict__ scratch,
                            int use_scratch) {
  extern __shared__ float tile_smem[];
  float* s_src = tile_smem;
  float* s_dst = tile_smem + S;
  const int t = threadIdx.x;
  const int lane = t & 31;
  const i64 step = 8 * (i64)blockDim.x;
  const int pre_cover = TILE_PRE * blockDim.x;
  for (i64 c = blockIdx.x; c < n_items; c += gridDim.x) {
    const i64 dst0 = item_dst[c];
    const i64 end = item_end[c];
    i64 s = item_start[c];
    int tile = item_tile[c];
    i64 seg_end = tile_end[tile] < end ? tile_end[tile] : end;
    i64 src0 = tile_src[tile];
    float pre[TILE_PRE];
    tile_load_pre(contrib, src0, S, n, pre);
    uint4 a, b;
    tile_load8(edges, s + 8 * (i64)t, end, a, b);
    for (int i = t; i < D; i += blockDim.x) s_dst[i] = 0.0f;
    while (s < end) {  // uniform over the block: one tile's part of the item
      __syncthreads();  // the previous tile's contributions are no longer read
#pragma unroll
      for (int u = 0; u < TILE_PRE; ++u) {
        const int i = t + u * blockDim.x;
        if (i < S) s_src[i] = pre[u];
      }
      for (int i = pre_cover + t; i < S; i += blockDim.x)
        s_src[i] = src0 + i < n ? contrib[src0 + i] : 0.0f;
      __syncthreads();
      const bool more = seg_end < end;
      i64 next_end = end, next_src0 = 0;
      if (more) {
        next_end = tile_end[tile + 1] < end ? tile_end[tile + 1] : end;
        next_src0 = tile_src[tile + 1];
        tile_load_pre(contrib, next_src0, S, n, pre);
      }
      for (i64 base = s; base < seg_end; base += step) {
        const i64 k = base + 8 * (i64)t;
        const i64 next_base = base + step < seg_end ? base + step : seg_end;
        uint4 na, nb;
        tile_load8(edges, next_base + 8 * (i64)t, end, na, nb);
        // Runs of one destination. A tile's edges are sorted by destination, so a run that is
        // neither the first nor the last of a thread's 8 edges is the only one of its
        // destination in this tile: plain add (a float atomicAdd on shared memory is a CAS
        // loop on sm_90). The first run is handed to the previous lane when that lane's last
        // run has the same destination, and the last runs are merged across the warp by a
        // segmented scan; only what may continue into another warp (lane 0's first run, the
        // segment ending at lane 31, a segment from lane 0 whose lane has a single run) is
        // added atomically.
        unsigned cur = TILE_PAD, first = TILE_PAD;
        float acc = 0.0f, first_sum = 0.0f;
        int multi = 0;
        if (k < seg_end) {  // seg_end and k are multiples of 8: all 8 edges are in the tile
          const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            if (w[u] == TILE_PAD) continue;  // padding: only at a tile's end
            const unsigned dst = w[u] >> 16;
            const float v = s_src[w[u] & 0xffffu];
            if (dst == cur) {
              acc += v;
            } else {
              if (cur == TILE_PAD) {
                first = dst;
              } else if (!multi) {
                first_sum = acc;
                multi = 1;
              } else {
                s_dst[cur] += acc;
              }
              cur = dst;
              acc = v;
            }
          }
        }
        const unsigned prev_cur = __shfl_up_sync(GRAPHDB_FULL_MASK, cur, 1);
        const unsigned next_first = __shfl_down_sync(GRAPHDB_FULL_MASK, first, 1);
        const float next_sum = __shfl_down_sync(GRAPHDB_FULL_MASK, first_sum, 1);
        const int next_multi = __shfl_down_sync(GRAPHDB_FULL_MASK, multi, 1);
        if (lane < 31 && next_multi && cur != TILE_PAD && next_first == cur) acc += next_sum;
        if (multi && !(lane > 0 && prev_cur == first)) {
          if (lane == 0) atomicAdd(&s_dst[first], first_sum);
          else s_dst[first] += first_sum;
        }
        acc = warp_segmented_sum(acc, cur, lane);
        const unsigned c_next = __shfl_down_sync(GRAPHDB_FULL_MASK, cur, 1);
        const unsigned heads = __ballot_sync(GRAPHDB_FULL_MASK, lane == 0 || prev_cur != cur);
        const int seg_first = 31 - __clz(heads & (0xffffffffu >> (31 - lane)));
        const int multi0 = __shfl_sync(GRAPHDB_FULL_MASK, multi, 0);
        if (cur != TILE_PAD && (lane == 31 || c_next != cur)) {
          if (lane == 31 || (seg_first == 0 && !multi0)) atomicAdd(&s_dst[cur], acc);
          else s_dst[cur] += acc;
        }
        a = na;
        b = nb;
      }
      s = seg_end;
      seg_end = next_end;
      src0 = next_src0;
      ++tile;
    }
    __syncthreads();
    tile_flush(s_dst, item_slot[c], use_scratch, dst0, D, n, sums, scratch);
    __syncthreads();  // shared memory is refilled for the next item
  }
}
