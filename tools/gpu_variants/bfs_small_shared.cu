// A variant of graphdb_frontier_bfs_small (executor/operators/frontier.cu) for the lead's
// measurement run: the same top-down BFS levels in one thread block, with the frontier queues
// and the level's counters in shared memory instead of global memory.
//
// Why: on a grid (4095 levels of at most ~2 K vertices) each level of the default kernel is a
// chain of dependent round trips to L2: the queue entry, the piece's row, its targets, the
// claim, the append (a global atomic per warp), five global atomics per warp for the level's
// counters, and the counter read after the barrier: about 10 us a level on an H200. Here the
// queue entries, the appends and the counters are shared-memory operations; what is left per
// level is the row and targets loads, the claims (atomicCAS on depth, global) and one barrier.
//
// It leaves the global queues and the control block exactly as the default kernel leaves them
// when it returns (the level it stops at: its queue, its counters, the running totals, the
// deepest level, the steps run), so the host loop and the many-block kernel continue as before.
// Appends past the shared queue's capacity (`limit` pieces, the most a single-block level
// starts from) go straight to the global queue at their index; when the block stops, the
// shared part is copied in front of them.
#include "graphdb/common.cuh"
#include "graphdb/udc.cuh"

using namespace graphdb;

#define CTRL_SLOT(step) (GRAPHDB_CTRL_FIELDS * ((step) % GRAPHDB_CTRL_SLOTS))
#define SHARED_UNROLL 4

// Warp-collective append of each lane's `count` pieces of vertex v: slots reserved from the
// shared counter, written to the shared queue below `cap` and to the global one from there.
template <typename Id>
__device__ __forceinline__ void append_shared(Id v, i64 count, unsigned long long* length,
                                              Id* s_vertex, int* s_piece, Id* g_vertex,
                                              int* g_piece, i64 cap) {
  if (!__any_sync(GRAPHDB_FULL_MASK, count > 0)) return;
  // exclusive prefix of the lanes' counts, and their total
  i64 before = count;
  for (int d = 1; d < 32; d <<= 1) {
    const i64 x = __shfl_up_sync(GRAPHDB_FULL_MASK, before, d);
    if (lane_id() >= d) before += x;
  }
  const i64 total = __shfl_sync(GRAPHDB_FULL_MASK, before, 31);
  before -= count;
  unsigned long long base = 0;
  if (lane_id() == 0) base = atomicAdd(length, (unsigned long long)total);
  base = __shfl_sync(GRAPHDB_FULL_MASK, base, 0);
  for (i64 p = 0; p < count; ++p) {  // a hub's many pieces: rare in a small frontier
    const i64 slot = (i64)base + before + p;
    if (slot < cap) {
      s_vertex[slot] = v;
      s_piece[slot] = (int)p;
    } else {
      g_vertex[slot] = v;
      g_piece[slot] = (int)p;
    }
  }
}

template <typename Id>
__global__ void __launch_bounds__(GRAPHDB_SMALL_FRONTIER_THREADS)
graphdb_bfs_small_shared(const i64* out_offsets, const Id* out_targets, int* depth,
                         Id* q0_vertex, int* q0_piece, Id* q1_vertex, int* q1_piece, u64* ctrl,
                         int level, int K, int max_steps, i64 limit) {
  extern __shared__ unsigned char smem[];
  const i64 cap = limit;
  Id* s_vertex[2] = {reinterpret_cast<Id*>(smem), reinterpret_cast<Id*>(smem) + cap};
  int* s_piece[2] = {reinterpret_cast<int*>(s_vertex[1] + cap),
                     reinterpret_cast<int*>(s_vertex[1] + cap) + cap};
  // the level's counters, three sets rotating: step s appends into set s % 3, which every
  // thread reads after the step's barrier; set (s + 1) % 3, last read after step s - 2's
  // barrier, is zeroed during step s for step s + 1
  __shared__ unsigned long long s_next[3], s_vertices[3], s_edges[3];
  Id* g_vertex[2] = {q0_vertex, q1_vertex};
  int* g_piece[2] = {q0_piece, q1_piece};

  const int lane = lane_id();
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  // the queue of `level`: the one the level before appended into (step_queues in frontier.cu)
  i64 qlen = (i64)__ldcg(&ctrl[CTRL_SLOT(level)]);
  int cur = 0;
  for (i64 i = threadIdx.x; i < qlen; i += blockDim.x) {
    s_vertex[0][i] = __ldcg(&g_vertex[level & 1][i]);
    s_piece[0][i] = __ldcg(&g_piece[level & 1][i]);
  }
  if (threadIdx.x < 3) s_next[threadIdx.x] = s_vertices[threadIdx.x] = s_edges[threadIdx.x] = 0;
  __syncthreads();

  u64 total_vertices = 0, total_edges = 0;  // (thread 0)
  int deepest = -1, steps = 0;
  while (true) {
    const int set = steps % 3;
    if (threadIdx.x == 0) s_next[(steps + 1) % 3] = s_vertices[(steps + 1) % 3] =
        s_edges[(steps + 1) % 3] = 0;
    const int next_depth = level + 1;
    Id* out_vertex = g_vertex[(level + 1) & 1];  // the global queue this level appends into
    int* out_piece = g_piece[(level + 1) & 1];
    u64 found_vertices = 0, found_edges = 0;
    for (i64 base = (i64)warp * 32; base < qlen; base += (i64)warps * 32) {
      const i64 i = base + lane;
      i64 start = 0;
      int len = 0;
      if (i < qlen) piece_range(out_offsets, s_vertex[cur][i], s_piece[cur][i], K, start, len);
      const int most = warp_max(len);
      for (int e0 = 0; e0 < most; e0 += SHARED_UNROLL) {
        Id w[SHARED_UNROLL];
#pragma unroll
        for (int u = 0; u < SHARED_UNROLL; ++u)
          w[u] = e0 + u < len ? out_targets[start + e0 + u] : Id(-1);
        i64 deg[SHARED_UNROLL];
        int claimed = 0;
#pragma unroll
        for (int u = 0; u < SHARED_UNROLL; ++u) {
          deg[u] = 0;
          if (w[u] >= 0) {
            deg[u] = out_offsets[w[u] + 1] - out_offsets[w[u]];
            if (atomicCAS(&depth[w[u]], -1, next_depth) == -1) claimed |= 1 << u;
          }
        }
#pragma unroll
        for (int u = 0; u < SHARED_UNROLL; ++u) {
          const bool mine = (claimed >> u) & 1;
          if (mine) {
            found_vertices += 1;
            found_edges += (u64)deg[u];
          }
          append_shared(mine ? w[u] : Id(0), mine ? num_pieces(deg[u], K) : (i64)0,
                        &s_next[set], s_vertex[1 - cur], s_piece[1 - cur], out_vertex,
                        out_piece, cap);
        }
      }
    }
    found_vertices = warp_sum(found_vertices);
    found_edges = warp_sum(found_edges);
    if (lane == 0 && found_vertices) {
      atomicAdd(&s_vertices[set], (unsigned long long)found_vertices);
      atomicAdd(&s_edges[set], (unsigned long long)found_edges);
    }
    __syncthreads();
    qlen = (i64)s_next[set];
    if (threadIdx.x == 0 && s_vertices[set]) {
      total_vertices += s_vertices[set];
      total_edges += s_edges[set];
      deepest = next_depth;
    }
    ++level;
    ++steps;
    cur = 1 - cur;
    if (qlen == 0 || qlen > limit || steps >= max_steps) break;
  }
  // Leave the global state as the default kernel would: this level's queue, its counters
  // (and the next slot zeroed), the running totals, the deepest level, the steps run.
  const i64 kept = qlen < cap ? qlen : cap;
  for (i64 i = threadIdx.x; i < kept; i += blockDim.x) {
    g_vertex[level & 1][i] = s_vertex[cur][i];
    g_piece[level & 1][i] = s_piece[cur][i];
  }
  if (threadIdx.x == 0) {
    const int set = (steps - 1) % 3;
    u64* now = ctrl + CTRL_SLOT(level);
    u64* after = ctrl + CTRL_SLOT(level + 1);
    now[0] = (u64)qlen;
    now[1] = s_vertices[set];
    now[2] = s_edges[set];
    now[3] = 0;
    for (int f = 0; f < GRAPHDB_CTRL_FIELDS; ++f) after[f] = 0;
    ctrl[GRAPHDB_CTRL_ACTIVATED_VERTICES] += total_vertices;
    ctrl[GRAPHDB_CTRL_ACTIVATED_EDGES] += total_edges;
    if (deepest >= 0 && (u64)deepest > ctrl[GRAPHDB_CTRL_DEEPEST])
      ctrl[GRAPHDB_CTRL_DEEPEST] = (u64)deepest;
    ctrl[GRAPHDB_CTRL_STEPS_RUN] = (u64)steps;
  }
}
