// Frontier traversals with the Unified Degree Cut: BFS (top-down and bottom-up levels) and
// SSSP (near-far buckets, Bellman-Ford relaxation inside a bucket).
//
// Control block layout (u64 ctrl[GRAPHDB_CTRL_WORDS], constants from executor/abi.py):
// GRAPHDB_CTRL_SLOTS rotating slots of GRAPHDB_CTRL_FIELDS counters
//   slot[0] queue length in pieces, slot[1] activated vertices, slot[2] their out-edges,
//   slot[3] (SSSP) "inverted" minimum distance above the bucket (INF bits minus bits, so 0 = none)
// Step s reads slot s % 3, appends into slot (s + 1) % 3 and zeroes slot (s + 2) % 3, which no
// one reads or writes during step s. Successive launches on one stream therefore need no host
// round trip and no memset between them: the host only reads the counters when it must decide.
// ctrl[GRAPHDB_CTRL_ACTIVATED_VERTICES], ctrl[GRAPHDB_CTRL_ACTIVATED_EDGES]: vertices and edges
// activated so far (for the direction heuristic); ctrl[GRAPHDB_CTRL_DEEPEST] the deepest level
// that activated a vertex; ctrl[GRAPHDB_CTRL_STEPS_RUN] the steps the last *_small launch ran.
//
// Small frontiers (a grid's, a road network's) go to the *_small kernels: one thread block runs
// level after level (relaxation round after round) and returns to the host only when the
// frontier is empty, outgrows `limit` pieces, or `max_steps` ran. Each step leaves the queues
// and the control block exactly as the many-block kernel would, so the host can switch between
// the two at any step. Inside the block, what other threads wrote in earlier steps (queue
// entries, distances, counters) is read through L2 (__ldcg): the SM's L1 may still hold a line
// from before.
#include "graphdb/common.cuh"
#include "graphdb/udc.cuh"

using namespace graphdb;

#define CTRL_SLOT(step) (GRAPHDB_CTRL_FIELDS * ((step) % GRAPHDB_CTRL_SLOTS))
#define INF_BITS 0x7FF0000000000000ULL

// A warp's activations of one BFS level, into the next slot's counters, the running totals and
// the deepest level reached. All lanes call it.
__device__ __forceinline__ void count_level(u64* ctrl, u64* nxt, u64 found_vertices,
                                            u64 found_edges, int depth) {
  found_vertices = warp_sum(found_vertices);
  found_edges = warp_sum(found_edges);
  if (lane_id() == 0 && found_vertices) {
    atomicAdd(&nxt[1], found_vertices);
    atomicAdd(&nxt[2], found_edges);
    atomicAdd(&ctrl[GRAPHDB_CTRL_ACTIVATED_VERTICES], found_vertices);
    atomicAdd(&ctrl[GRAPHDB_CTRL_ACTIVATED_EDGES], found_edges);
    atomicMax(&ctrl[GRAPHDB_CTRL_DEEPEST], (u64)depth);
  }
}

// The source's pieces: the first frontier of a BFS.
template <typename Id>
__global__ void graphdb_frontier_seed(const i64* offsets, Id source, int K, int* depth,
                                      Id* queue_vertex, int* queue_piece, u64* ctrl) {
  const i64 deg = offsets[source + 1] - offsets[source];
  const i64 count = num_pieces(deg, K);
  for (i64 p = threadIdx.x; p < count; p += blockDim.x) {
    queue_vertex[p] = source;
    queue_piece[p] = (int)p;
  }
  if (threadIdx.x == 0) {
    depth[source] = 0;
    ctrl[CTRL_SLOT(0) + 0] = (u64)count;
    ctrl[CTRL_SLOT(0) + 1] = 1;
    ctrl[CTRL_SLOT(0) + 2] = (u64)deg;
    ctrl[GRAPHDB_CTRL_ACTIVATED_VERTICES] = 1;
    ctrl[GRAPHDB_CTRL_ACTIVATED_EDGES] = (u64)deg;
  }
}

// One BFS level. Top-down: one thread per queued piece, neighbours staged in shared memory,
// claim by CAS on depth, append the claimed vertex's pieces. Bottom-up (direction-optimizing,
// not in the paper): one thread per unvisited vertex scans its in-edges for a parent on this
// level and stops at the first. Both write the next level's piece queue, so the host may switch
// direction at any level. All loops are warp-uniform so that appends can be warp-collective.
// A rank of a partitioned BFS (operators/partitioned.cu) passes its shard, `claimed` (a bitmap
// of |V| bits: every vertex this launch claims is marked, for the exchange; null on one GPU) and
// the first vertex of its range, `v_lo` (bottom-up scans v_lo <= v < n only).
template <typename Id>
__global__ void graphdb_frontier_bfs_level(const i64* out_offsets, const Id* out_targets,
                                           const i64* in_offsets, const Id* in_targets,
                                           int* depth, i64 n, const Id* q_in_vertex,
                                           const int* q_in_piece, Id* q_out_vertex,
                                           int* q_out_piece, u64* ctrl, int level, int K,
                                           int bottom_up, unsigned* claimed, i64 v_lo) {
  extern __shared__ unsigned char graphdb_smem[];
  u64* cur = ctrl + CTRL_SLOT(level);
  u64* nxt = ctrl + CTRL_SLOT(level + 1);
  if (blockIdx.x == 0 && threadIdx.x < GRAPHDB_CTRL_FIELDS) ctrl[CTRL_SLOT(level + 2) + threadIdx.x] = 0;

  u64 found_vertices = 0, found_edges = 0;
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 num_warps = ((i64)gridDim.x * blockDim.x) >> 5;
  const int next_depth = level + 1;

  if (!bottom_up) {
    const i64 qlen = (i64)cur[0];
    Id* s_ids = reinterpret_cast<Id*>(graphdb_smem) + (threadIdx.x >> 5) * 32 * (K + 1);
    for (i64 base = warp * 32; base < qlen; base += num_warps * 32) {
      const i64 i = base + lane_id();
      i64 start = 0;
      int len = 0;
      if (i < qlen) piece_range(out_offsets, q_in_vertex[i], q_in_piece[i], K, start, len);
      stage_pieces<Id, false>(start, len, K, out_targets, nullptr, s_ids, nullptr);
      const Id* mine = s_ids + lane_id() * (K + 1);
      for (int e = 0; e < K; ++e) {
        Id w = 0;
        i64 count = 0;
        if (e < len) {
          w = mine[e];
          if (depth[w] < 0 && atomicCAS(&depth[w], -1, next_depth) == -1) {
            const i64 deg = out_offsets[w + 1] - out_offsets[w];
            count = num_pieces(deg, K);
            found_vertices += 1;
            found_edges += (u64)deg;
            if (claimed) atomicOr(&claimed[(i64)w >> 5], 1u << ((i64)w & 31));
          }
        }
        append_pieces(w, count, &nxt[0], q_out_vertex, q_out_piece);
      }
      __syncwarp();  // the next round overwrites s_ids
    }
  } else {
    for (i64 base = v_lo + warp * 32; base < n; base += num_warps * 32) {
      const i64 v = base + lane_id();
      i64 count = 0;
      if (v < n && depth[v] < 0) {
        const i64 end = in_offsets[v + 1];
        for (i64 k = in_offsets[v]; k < end; ++k) {
          if (depth[in_targets[k]] == level) {
            depth[v] = next_depth;  // only this thread handles v: a plain store suffices
            if (claimed) atomicOr(&claimed[v >> 5], 1u << (v & 31));
            const i64 deg = out_offsets[v + 1] - out_offsets[v];
            count = num_pieces(deg, K);
            found_vertices += 1;
            found_edges += (u64)deg;
            break;
          }
        }
      }
      append_pieces((Id)v, count, &nxt[0], q_out_vertex, q_out_piece);
    }
  }
  count_level(ctrl, nxt, found_vertices, found_edges, next_depth);
}

// SSSP, one relaxation round over the queued pieces of the current bucket [.., hi): vertices
// whose distance drops below `hi` are queued again (once per round, deduplicated by `stamp`);
// those that land at or above `hi` stay in the implicit far set {v : dist[v] >= hi}, which the
// bucket kernel below rebuilds by a scan instead of keeping a far queue that can overflow.
// A rank of a partitioned SSSP passes `changed` (a byte per vertex: set for every vertex whose
// distance this launch lowered, for the exchange; null on one GPU).
template <typename Id>
__global__ void graphdb_frontier_sssp_relax(const i64* offsets, const Id* targets,
                                            const double* weights, double* dist, int* stamp,
                                            const Id* q_in_vertex, const int* q_in_piece,
                                            Id* q_out_vertex, int* q_out_piece, u64* ctrl,
                                            int step, double hi, int K,
                                            unsigned char* changed) {
  extern __shared__ unsigned char graphdb_smem[];
  u64* cur = ctrl + CTRL_SLOT(step);
  u64* nxt = ctrl + CTRL_SLOT(step + 1);
  if (blockIdx.x == 0 && threadIdx.x < GRAPHDB_CTRL_FIELDS) ctrl[CTRL_SLOT(step + 2) + threadIdx.x] = 0;

  const i64 qlen = (i64)cur[0];
  const int warp_in_block = threadIdx.x >> 5;
  const int warps_per_block = blockDim.x >> 5;
  double* s_w = reinterpret_cast<double*>(graphdb_smem) + warp_in_block * 32 * (K + 1);
  Id* s_ids = reinterpret_cast<Id*>(reinterpret_cast<double*>(graphdb_smem) +
                                    warps_per_block * 32 * (K + 1)) +
              warp_in_block * 32 * (K + 1);
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 num_warps = ((i64)gridDim.x * blockDim.x) >> 5;

  for (i64 base = warp * 32; base < qlen; base += num_warps * 32) {
    const i64 i = base + lane_id();
    i64 start = 0;
    int len = 0;
    double du = 0.0;
    if (i < qlen) {
      const Id v = q_in_vertex[i];
      piece_range(offsets, v, q_in_piece[i], K, start, len);
      du = dist[v];
    }
    stage_pieces<Id, true>(start, len, K, targets, weights, s_ids, s_w);
    const Id* my_ids = s_ids + lane_id() * (K + 1);
    const double* my_w = s_w + lane_id() * (K + 1);
    for (int e = 0; e < K; ++e) {
      Id w = 0;
      i64 count = 0;
      if (e < len) {
        w = my_ids[e];
        const double nd = du + my_w[e];
        if (nd < dist[w]) {
          const double old = atomic_min_nonneg(&dist[w], nd);
          if (changed && nd < old) changed[w] = 1;
          if (nd < old && nd < hi && atomicExch(&stamp[w], step) != step)
            count = num_pieces(offsets[w + 1] - offsets[w], K);
        }
      }
      append_pieces(w, count, &nxt[0], q_out_vertex, q_out_piece);
    }
    __syncwarp();
  }
}

// SSSP bucket start: queue the pieces of every vertex with lo <= dist < hi, and find the
// smallest distance >= hi (so the host can jump over empty buckets).
// (A rank of a partitioned SSSP scans its own vertices, v_lo <= v < n.)
template <typename Id>
__global__ void graphdb_frontier_sssp_bucket(const i64* offsets, const double* dist, i64 n,
                                             double lo, double hi, Id* q_out_vertex,
                                             int* q_out_piece, u64* ctrl, int step, int K,
                                             i64 v_lo) {
  u64* nxt = ctrl + CTRL_SLOT(step + 1);
  if (blockIdx.x == 0 && threadIdx.x < GRAPHDB_CTRL_FIELDS) ctrl[CTRL_SLOT(step + 2) + threadIdx.x] = 0;
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 num_warps = ((i64)gridDim.x * blockDim.x) >> 5;
  u64 above = 0;  // INF_BITS - bits(min distance >= hi); 0 means none
  for (i64 base = v_lo + warp * 32; base < n; base += num_warps * 32) {
    const i64 v = base + lane_id();
    i64 count = 0;
    if (v < n) {
      const double d = dist[v];
      if (d >= lo && d < hi) {
        count = num_pieces(offsets[v + 1] - offsets[v], K);
      } else if (d >= hi && (u64)__double_as_longlong(d) < INF_BITS) {
        const u64 inv = INF_BITS - (u64)__double_as_longlong(d);
        above = inv > above ? inv : above;
      }
    }
    append_pieces((Id)v, count, &nxt[0], q_out_vertex, q_out_piece);
  }
  above = warp_max(above);
  if (lane_id() == 0 && above) atomicMax(&nxt[3], above);
}

// Edges of a thread's piece are taken SMALL_UNROLL at a time with their loads issued together,
// so a level costs a few round trips to L2 per piece rather than a few per edge.
#define SMALL_UNROLL 4

// The queues of step `step` (the two alternate; PieceQueues.pair in frontier_gpu.py).
template <typename Id>
struct StepQueues {
  const Id* in_vertex;
  const int* in_piece;
  Id* out_vertex;
  int* out_piece;
};

template <typename Id>
__device__ __forceinline__ StepQueues<Id> step_queues(int step, Id* q0_vertex, int* q0_piece,
                                                      Id* q1_vertex, int* q1_piece) {
  if (step & 1) return {q1_vertex, q1_piece, q0_vertex, q0_piece};
  return {q0_vertex, q0_piece, q1_vertex, q1_piece};
}

// End of one step of a single-block kernel (all threads call it): wait for the step's appends,
// then whether to stop: the next queue is empty or outgrows `limit`, or `max_steps` ran. Every
// thread reads the same counter after the barrier, so the answer is uniform.
__device__ __forceinline__ bool small_step_done(const u64* ctrl, int next_step, int steps,
                                                int max_steps, i64 limit) {
  __syncthreads();
  const i64 next_len = (i64)__ldcg(&ctrl[CTRL_SLOT(next_step)]);
  return next_len == 0 || next_len > limit || steps >= max_steps;
}

// Several top-down BFS levels in one block (see the top of the file), from level `level`.
template <typename Id>
__global__ void __launch_bounds__(GRAPHDB_SMALL_FRONTIER_THREADS)
graphdb_frontier_bfs_small(const i64* out_offsets, const Id* out_targets, int* depth,
                           Id* q0_vertex, int* q0_piece, Id* q1_vertex, int* q1_piece, u64* ctrl,
                           int level, int K, int max_steps, i64 limit) {
  const int lane = lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int steps = 0;
  while (true) {
    u64* cur = ctrl + CTRL_SLOT(level);
    u64* nxt = ctrl + CTRL_SLOT(level + 1);
    if (threadIdx.x < GRAPHDB_CTRL_FIELDS) ctrl[CTRL_SLOT(level + 2) + threadIdx.x] = 0;
    const StepQueues<Id> q = step_queues(level, q0_vertex, q0_piece, q1_vertex, q1_piece);
    const i64 qlen = (i64)__ldcg(&cur[0]);
    const int next_depth = level + 1;
    u64 found_vertices = 0, found_edges = 0;
    for (i64 base = (i64)warp * 32; base < qlen; base += (i64)warps * 32) {
      const i64 i = base + lane;
      i64 start = 0;
      int len = 0;
      if (i < qlen) piece_range(out_offsets, __ldcg(&q.in_vertex[i]), __ldcg(&q.in_piece[i]), K,
                                start, len);
      const int most = warp_max(len);
      for (int e0 = 0; e0 < most; e0 += SMALL_UNROLL) {
        Id w[SMALL_UNROLL];
#pragma unroll
        for (int u = 0; u < SMALL_UNROLL; ++u) w[u] = e0 + u < len ? out_targets[start + e0 + u] : Id(-1);
        // One round trip for the claim and the claimed vertex's row: the compare-and-swap goes
        // out without a load of the depth first, the row's bounds beside it (a small
        // frontier's level costs its round trips, not its loads).
        i64 deg[SMALL_UNROLL];
        int claimed = 0;  // bit u: this lane claimed w[u]
#pragma unroll
        for (int u = 0; u < SMALL_UNROLL; ++u) {
          deg[u] = 0;
          if (w[u] >= 0) {
            deg[u] = out_offsets[w[u] + 1] - out_offsets[w[u]];
            if (atomicCAS(&depth[w[u]], -1, next_depth) == -1) claimed |= 1 << u;
          }
        }
#pragma unroll
        for (int u = 0; u < SMALL_UNROLL; ++u) {
          const bool mine = (claimed >> u) & 1;
          if (mine) {
            found_vertices += 1;
            found_edges += (u64)deg[u];
          }
          append_pieces(mine ? w[u] : Id(0), mine ? num_pieces(deg[u], K) : 0, &nxt[0],
                        q.out_vertex, q.out_piece);
        }
      }
    }
    count_level(ctrl, nxt, found_vertices, found_edges, next_depth);
    if (small_step_done(ctrl, ++level, ++steps, max_steps, limit)) break;
  }
  if (threadIdx.x == 0) ctrl[GRAPHDB_CTRL_STEPS_RUN] = (u64)steps;
}

// Label-correcting relaxation rounds over the queued pieces, deduplicated per round by `stamp`:
// SSSP inside a near-far bucket (min-plus: value[w] = min(value[u] + weight), a vertex queued
// again only below `hi`), or widest paths (WIDEST, max-min: value[w] = max(min(value[u],
// weight)); +inf at the source, -inf unreached; an atomic max by compare-and-swap, widths may
// be negative). Launched with one block it runs round after round while the queue holds at most
// `limit` pieces (as bfs_small above); with several blocks, one round. SSSP's large queues go
// to graphdb_frontier_sssp_relax (shared-memory staging) instead.
__device__ __forceinline__ double atomic_max_double(double* addr, double value) {
  unsigned long long* word = reinterpret_cast<unsigned long long*>(addr);
  unsigned long long old = *word;
  while (__longlong_as_double((long long)old) < value) {
    const unsigned long long seen =
        atomicCAS(word, old, (unsigned long long)__double_as_longlong(value));
    if (seen == old) break;
    old = seen;
  }
  return __longlong_as_double((long long)old);
}

template <typename Id, bool WIDEST>
__global__ void __launch_bounds__(GRAPHDB_SMALL_FRONTIER_THREADS)
graphdb_frontier_relax_rounds(const i64* offsets, const Id* targets, const double* weights,
                              double* value, int* stamp, Id* q0_vertex, int* q0_piece,
                              Id* q1_vertex, int* q1_piece, u64* ctrl, int step, double hi,
                              int K, int max_steps, i64 limit) {
  const int lane = lane_id();
  const int warps = blockDim.x >> 5;
  const i64 warp = (i64)blockIdx.x * warps + (threadIdx.x >> 5);
  const i64 all_warps = (i64)gridDim.x * warps;
  int steps = 0;
  while (true) {
    u64* cur = ctrl + CTRL_SLOT(step);
    u64* nxt = ctrl + CTRL_SLOT(step + 1);
    if (blockIdx.x == 0 && threadIdx.x < GRAPHDB_CTRL_FIELDS)
      ctrl[CTRL_SLOT(step + 2) + threadIdx.x] = 0;
    const StepQueues<Id> q = step_queues(step, q0_vertex, q0_piece, q1_vertex, q1_piece);
    const i64 qlen = (i64)__ldcg(&cur[0]);
    for (i64 base = warp * 32; base < qlen; base += all_warps * 32) {
      const i64 i = base + lane;
      i64 start = 0;
      int len = 0;
      double mine = 0.0;
      if (i < qlen) {
        const Id v = __ldcg(&q.in_vertex[i]);
        piece_range(offsets, v, __ldcg(&q.in_piece[i]), K, start, len);
        mine = __ldcg(&value[v]);
      }
      const int most = warp_max(len);
      for (int e0 = 0; e0 < most; e0 += SMALL_UNROLL) {
        Id w[SMALL_UNROLL];
        double cand[SMALL_UNROLL];
        i64 count[SMALL_UNROLL];
#pragma unroll
        for (int u = 0; u < SMALL_UNROLL; ++u) {
          const bool edge = e0 + u < len;
          w[u] = edge ? targets[start + e0 + u] : Id(-1);
          const double weight = edge ? weights[start + e0 + u] : 0.0;
          cand[u] = WIDEST ? (weight < mine ? weight : mine) : mine + weight;
        }
#pragma unroll
        for (int u = 0; u < SMALL_UNROLL; ++u) {
          count[u] = 0;
          if (w[u] < 0) continue;
          const double seen = __ldcg(&value[w[u]]);
          if (WIDEST ? cand[u] > seen : cand[u] < seen) {
            const double old = WIDEST ? atomic_max_double(&value[w[u]], cand[u])
                                      : atomic_min_nonneg(&value[w[u]], cand[u]);
            const bool better = WIDEST ? cand[u] > old : (cand[u] < old && cand[u] < hi);
            if (better && atomicExch(&stamp[w[u]], step) != step)
              count[u] = num_pieces(offsets[w[u] + 1] - offsets[w[u]], K);
          }
        }
#pragma unroll
        for (int u = 0; u < SMALL_UNROLL; ++u)
          append_pieces(count[u] > 0 ? w[u] : Id(0), count[u], &nxt[0], q.out_vertex,
                        q.out_piece);
      }
    }
    ++step;
    ++steps;
    if (gridDim.x > 1) break;  // one round; the host reads the queue length
    if (small_step_done(ctrl, step, steps, max_steps, limit)) break;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) ctrl[GRAPHDB_CTRL_STEPS_RUN] = (u64)steps;
}

// A shortest path read back from the target once its distance is known (one block): path[j] is
// the path's vertex at step j. BFS (depth given, dist null): the predecessor of v at depth d is
// its smallest in-neighbour at depth d - 1. Weighted (dist given): the smallest in-neighbour u
// with dist[u] + w(u, v) == dist[v] (bit-exact: the relaxation that set dist[v] added the same
// two doubles), preferring dist[u] < dist[v]; a walk that would take more than `max_flat`
// zero-weight steps in a row gives up (ctrl[0] = 1) and the host searches on the CPU instead.
// `in_weights` are the in-CSR's weights (aligned with in_targets). ctrl[1] returns the length.
template <typename Id>
__global__ void __launch_bounds__(256)
graphdb_frontier_path(const i64* in_offsets, const Id* in_targets, const double* in_weights,
                      const int* depth, const double* dist, Id source, Id target, i64 capacity,
                      int max_flat, Id* reversed, u64* ctrl) {
  __shared__ unsigned long long best_strict, best_flat;
  __shared__ int give_up;
  Id v = target;
  i64 j = 0;
  int flat = 0;
  if (threadIdx.x == 0) {
    reversed[0] = v;
    give_up = 0;
  }
  while (v != source) {
    if (threadIdx.x == 0) best_strict = best_flat = ~0ULL;
    __syncthreads();
    const i64 end = in_offsets[v + 1];
    for (i64 k = in_offsets[v] + threadIdx.x; k < end; k += blockDim.x) {
      const Id u = in_targets[k];
      if (dist == nullptr) {
        if (depth[u] == depth[v] - 1) atomicMin(&best_strict, (unsigned long long)u);
      } else if (dist[u] + in_weights[k] == dist[v]) {
        atomicMin(dist[u] < dist[v] ? &best_strict : &best_flat, (unsigned long long)u);
      }
    }
    __syncthreads();
    const unsigned long long pick = best_strict != ~0ULL ? best_strict : best_flat;
    flat = best_strict != ~0ULL ? 0 : flat + 1;
    if (pick == ~0ULL || flat > max_flat || j + 1 >= capacity) {
      if (threadIdx.x == 0) give_up = 1;
      break;  // uniform: every thread read the same shared values
    }
    v = (Id)pick;
    ++j;
    if (threadIdx.x == 0) reversed[j] = v;
    __syncthreads();  // best_* are reset for the next step
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ctrl[0] = (u64)give_up;
    ctrl[1] = (u64)(j + 1);
  }
}
