// Cache-blocked PageRank (GraphCage's TOCAB) with the Graphalytics semantics.
//
// Pull: the in-CSR is cut by *source* range into blocks whose source values (float32
// contributions rank/outdeg) fit in about a third of L2, so the random reads of one block hit
// L2. Each block keeps only its non-empty rows: id_map (destination ids, ascending), rowptr
// (int64, local) and a dense float partial sum per row. One merge kernel then walks vertex ranges
// of RANGE ids, adds every block's partials of that range in shared memory (coalesced reads,
// because id_map is sorted) and applies the PageRank update. On graphs with hot-source tiles (see
// below) every sum goes into one dense array instead and the merge reads that alone.
// Rows longer than `heavy` edges (RMAT hubs) are cut into pieces of `chunk` edges, one thread
// block per piece, so one hub does not serialise a thread for a million edges.
//
// The numeric step, written once for every GPU variant (resident here; edge chunks and pages
// through graphdb_pagerank_prepare/update): pagerank_vertex.
#include "graphdb/common.cuh"

using namespace graphdb;

#define RANGE GRAPHDB_PAGERANK_RANGE

// One vertex's Graphalytics update: PR'(v) = base + d * sum, base = (1 - d)/n + d * D/n with D
// the previous ranks' dangling total. Returns the new rank; sets its next contribution (rank /
// out-degree: a reciprocal, not a division, whose slow-path call made ptxas spill the merge's
// live accumulators) or, for a dangling vertex, adds the rank to the next dangling total; adds
// |new - old| to the L1 change when it is tracked.
__device__ __forceinline__ double pagerank_vertex(double base, double damping, double sum,
                                                  int deg, double old, int track_change,
                                                  double& contrib, double& dangling,
                                                  double& change) {
  const double fresh = base + damping * sum;
  if (track_change) change += fabs(fresh - old);
  if (deg) {
    contrib = fresh * __drcp_rn((double)deg);
  } else {
    contrib = 0.0;
    dangling += fresh;
  }
  return fresh;
}

// The base of iteration `it`: scal[0..2] rotate like the frontier counters, iteration `it`
// reads D from scal[it % 3], adds the next D into scal[(it + 1) % 3] and zeroes
// scal[(it + 2) % 3] (block 0's thread 0), so iterations need no host round trip.
__device__ __forceinline__ double pagerank_base(double damping, i64 n, double* scal, int it) {
  if (blockIdx.x == 0 && threadIdx.x == 0) scal[(it + 2) % 3] = 0.0;
  return (1.0 - damping) / (double)n + damping * scal[it % 3] / (double)n;
}

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

// to_dense (pull): instead of a partial per row for the merge, each row's sum is added
// atomically into the dense sums out[id_map[row]] (a native global float atomic, one per row),
// where the tiles add theirs too; the merge then reads only the dense sums (no partials, no
// shared-memory atomics) and zeroes them for the next iteration.
// Light rows, G lanes per row (CSR-vector): the G lanes read consecutive column ids, so a row's
// edges arrive in whole sectors instead of one scattered load per thread. G is picked per block
// so that a lane has about UNROLL edges of a mean row; the next row's bounds are loaded before
// the current row is summed, so rows overlap. Rows longer than `heavy` go to the heavy kernel.
template <typename Id, int G>
__global__ void graphdb_pagerank_rows(const i64* rowptr, const Id* id_map, const Id* cols,
                                      i64 n_rows, int heavy, const float* contrib, float* out,
                                      int hints, int to_dense) {
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
      if (!to_dense && sub == 0) out[l] = 0.0f;
    } else {
      float acc = gather_sum<Id, 4>(cols, s + sub, e, G, contrib, hints);
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

template <typename Id>
__global__ void graphdb_pagerank_heavy(const i64* rowptr, const Id* id_map, const Id* cols,
                                       const i64* piece_row, const i64* piece_start,
                                       i64 n_pieces, int chunk, const float* contrib, float* out,
                                       int hints, int to_dense) {
  for (i64 p = blockIdx.x; p < n_pieces; p += gridDim.x) {
    const i64 l = piece_row[p];
    const i64 s = piece_start[p];
    const i64 row_end = rowptr[l + 1];
    const i64 e = s + chunk < row_end ? s + chunk : row_end;
    float acc = gather_sum<Id, 8>(cols, s + threadIdx.x, e, blockDim.x, contrib, hints);
    acc = block_sum(acc);
    if (threadIdx.x == 0) atomicAdd(&out[to_dense ? (i64)id_map[l] : l], acc);
  }
}

// One thread block of RANGE threads per range of RANGE vertices (a thread per vertex): add
// every block's partials of the range in shared memory, then apply pagerank_vertex to the sum.
// Writes the new rank, the next contribution, the next dangling total and (with track_change)
// the L1 change.
// The rows of one block inside one range are distinct vertices, so each block contributes at
// most one partial per thread; the loads of 4 blocks are issued together before their adds,
// because this kernel is bound by round trips, not bytes.
// with_dense: every sum is in dense[] (the gathers and the tiles added theirs atomically; no
// partials, n_blocks = 0), which is zeroed after the apply for the next iteration's atomics.
// dense[v] is loaded with out_degree but used only after the partials, and the zero is stored
// after the apply: a store to the address of this thread's load still in flight stalled the
// merge (1.16 ms against 0.25 ms; docs/performance/gpu-operators.md).
// rank_mode 0: ranks not needed yet (fixed iteration count, not the last iteration); 1: rank[v];
// 2: the last iteration writes the ranks in the caller's order, rank[perm[v]].
// Only the vertices v_lo <= v < v_hi are applied (a rank of a partitioned run owns those; one GPU
// passes 0 and n); the base and the range table are the whole graph's (n vertices).
#define MERGE_BOUNDS 64
template <typename Id>
__global__ void __launch_bounds__(RANGE)
graphdb_pagerank_merge_apply(int n_blocks, const i64* range_ptr, const Id* id_map,
                             const float* partial, int with_dense, float* dense, i64 n,
                             i64 v_lo, i64 v_hi, const int* out_degree, double damping,
                             double* rank, float* contrib, double* scal, double* l1, int it,
                             int track_change, int rank_mode, const Id* perm) {
  __shared__ float acc[RANGE];
  __shared__ i64 lo_s[MERGE_BOUNDS], hi_s[MERGE_BOUNDS];
  // Read from shared memory at each apply (a barrier always comes first): kept in a register
  // across the range loop and the division's call, it was spilled to local memory.
  __shared__ double s_base;
  const i64 n_ranges = (n + RANGE - 1) / RANGE;
  if (threadIdx.x == 0) s_base = pagerank_base(damping, n, scal, it);
  const int t = threadIdx.x;
  double dangling_next = 0.0, change = 0.0;
  const i64 r_end = (v_hi + RANGE - 1) / RANGE;
  for (i64 r = v_lo / RANGE + blockIdx.x; r < r_end; r += gridDim.x) {
    const i64 v0 = r * RANGE;
    const i64 v = v0 + t;
    const bool valid = v >= v_lo && v < v_hi;
    float extra = 0.0f;
    int deg = 0;
    double old = 0.0;
    if (valid) {
      deg = out_degree[v];
      if (track_change) old = rank[v];
      if (with_dense) extra = dense[v];  // in flight during the partials, used at the apply
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
      double next_contrib;
      const double fresh = pagerank_vertex(s_base, damping, (double)(acc[t] + extra), deg, old,
                                           track_change, next_contrib, dangling_next, change);
      if (rank_mode == 1) rank[v] = fresh;
      else if (rank_mode == 2) rank[perm[v]] = fresh;
      contrib[v] = (float)next_contrib;
      if (with_dense && extra != 0.0f) dense[v] = 0.0f;  // ready for the next atomics
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

// The streamed variants (edge chunks, pages) around their pull of the sums, in float64: prepare
// gives every vertex its contribution rank / outdeg (the previous update did, for all but the
// first iteration: prepare runs once) and zeroes the sums; update applies pagerank_vertex to the
// sums, writing the new ranks and contributions, the next dangling total and the L1 change.
extern "C" __global__ void graphdb_pagerank_prepare(const double* __restrict__ rank,
                                                    const int* __restrict__ out_degree, i64 n,
                                                    double* contrib, double* sums,
                                                    double* scal) {
  double dangling = 0.0;
  for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n;
       v += (i64)gridDim.x * blockDim.x) {
    const int deg = out_degree[v];
    contrib[v] = deg ? rank[v] * __drcp_rn((double)deg) : 0.0;
    sums[v] = 0.0;
    if (!deg) dangling += rank[v];
  }
  dangling = block_sum(dangling);
  if (threadIdx.x == 0 && dangling != 0.0) atomicAdd(&scal[0], dangling);
}

extern "C" __global__ void graphdb_pagerank_update(double* sums, const int* __restrict__ out_degree,
                                                   i64 n, double damping, double* rank,
                                                   double* contrib, double* scal, double* l1,
                                                   int it) {
  __shared__ double s_base;
  if (threadIdx.x == 0) s_base = pagerank_base(damping, n, scal, it);
  __syncthreads();
  double dangling = 0.0, change = 0.0;
  for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n;
       v += (i64)gridDim.x * blockDim.x) {
    double next_contrib;
    rank[v] = pagerank_vertex(s_base, damping, sums[v], out_degree[v], rank[v], 1,
                              next_contrib, dangling, change);
    contrib[v] = next_contrib;
    sums[v] = 0.0;  // ready for the next pull
  }
  dangling = block_sum(dangling);
  change = block_sum(change);
  if (threadIdx.x == 0) {
    atomicAdd(&scal[(it + 1) % 3], dangling);
    atomicAdd(&l1[it], change);
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
// its destination's accumulator; at the end it adds the D sums into sums[] with global atomics
// (where the gather kernels add theirs: the merge reads sums[] alone and zeroes it).
// Inside a tile the edges are sorted by (dst_local, src_local): a thread takes 8 consecutive
// edges (two 16-byte loads) and adds runs of one destination in a register; its last run is
// reduced across the warp by a segmented scan, so that the hot destinations (which get many
// edges from hot sources, spread over many lanes) cost one shared atomic per warp, not per lane.
// The loads are taken off the critical path: with one 1024-thread block per SM (the tile's
// shared memory) nothing else runs on the SM while a block waits, so an item's edges being one
// contiguous stream whatever the tiles, each thread loads its next 8 edges (at the next batch's
// position: the next base, or the next tile's first edge) before it works on the current 8, and
// loads the next tile's contributions into registers (TILE_PRE per thread) while the current
// tile's edges are summed; at the next tile they go from registers to shared memory between the
// two barriers. Words loaded past the current tile's end are not used there: that batch is
// loaded again at the next tile's base (an L2 hit).
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

// An item's column sums, from shared memory, added into sums[].
__device__ __forceinline__ void tile_flush(const float* s_dst, i64 dst0, int D, i64 n,
                                           float* __restrict__ sums) {
  for (int i = threadIdx.x; i < D && dst0 + i < n; i += blockDim.x) {
    const float v = s_dst[i];
    if (v != 0.0f) atomicAdd(&sums[dst0 + i], v);
  }
}

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
graphdb_pagerank_tiles(const unsigned* __restrict__ edges, const i64* __restrict__ tile_end,
                       const int* __restrict__ tile_src, const i64* __restrict__ item_start,
                       const i64* __restrict__ item_end, const int* __restrict__ item_tile,
                       const int* __restrict__ item_dst, i64 n_items, int S, int D, i64 n,
                       const float* __restrict__ contrib, float* __restrict__ sums) {
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
    tile_flush(s_dst, dst0, D, n, sums);
    __syncthreads();  // shared memory is refilled for the next item
  }
}
