// The partitioned operators' one gather kernel: for each of a rank's rows (its in-rows, or
// out-rows), the sum of a replicated or exchanged vector over the row's neighbours, in float64.
// A warp per row, lanes striding over the row's edges, the row sum reduced by shuffles: the
// same semantics as the CPU twin (operators/partitioned.py, _pull_sum). PageRank's pull uses it
// with the contributions, BFS's bottom-up levels with the frontier as 0/1 values (a positive
// sum: a parent in the frontier).
#include "graphdb/common.cuh"

using namespace graphdb;

template <typename Id>
__global__ void graphdb_partition_pull_sum(const i64* offsets, const Id* cols, i64 rows,
                                           const double* values, double* sums) {
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 r = warp; r < rows; r += warps) {
    double acc = 0.0;
    const i64 end = offsets[r + 1];
    for (i64 k = offsets[r] + lane_id(); k < end; k += 32) acc += values[cols[k]];
    acc = warp_sum(acc);
    if (lane_id() == 0) sums[r] = acc;
  }
}

// ---- the team's exchange kernels (partitioned operators on GPUs) ------------------------------
#include "graphdb/udc.cuh"

#define TEAM_SLOT(step) (GRAPHDB_CTRL_FIELDS * ((step) % GRAPHDB_CTRL_SLOTS))

// BFS, after the level's bitmaps were gathered (`bits`: `parts` bitmaps of `words` words, this
// rank's at `self`): every vertex any rank claimed takes depth level + 1 in this rank's copy,
// this rank's own vertices that only a peer claimed join its next queue (its own claims are
// there already), and the level's global counts go to `team` (the control-block layout: slot
// level + 1 gets the vertices and their out-edges; the running totals and the deepest level).
// One thread per vertex; the 32 lanes of a warp share one word, so a warp whose word is empty
// in every bitmap leaves at once.
template <typename Id>
__global__ void graphdb_team_bfs_apply(const unsigned* bits, i64 words, int parts, int self,
                                       i64 n, i64 v_lo, i64 v_hi, const i64* out_offsets,
                                       const int* out_degree, int* depth, Id* q_out_vertex,
                                       int* q_out_piece, u64* ctrl, u64* team, int level,
                                       int K) {
  u64* nxt = ctrl + TEAM_SLOT(level + 1);
  u64* tn = team + TEAM_SLOT(level + 1);
  if (blockIdx.x == 0 && threadIdx.x < GRAPHDB_CTRL_FIELDS) team[TEAM_SLOT(level + 2) + threadIdx.x] = 0;
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 num_warps = ((i64)gridDim.x * blockDim.x) >> 5;
  u64 found = 0, found_edges = 0;
  for (i64 w = warp; w < words; w += num_warps) {
    unsigned any = 0;
    for (int p = 0; p < parts; ++p) any |= bits[(i64)p * words + w];
    if (!any) continue;  // uniform over the warp
    const unsigned mine = bits[(i64)self * words + w];
    const i64 v = w * 32 + lane_id();
    i64 count = 0;
    if (v < n && ((any >> lane_id()) & 1u)) {
      found += 1;
      found_edges += (u64)out_degree[v];
      if (depth[v] < 0) depth[v] = level + 1;
      if (v >= v_lo && v < v_hi && !((mine >> lane_id()) & 1u))
        count = num_pieces(out_offsets[v + 1] - out_offsets[v], K);
    }
    append_pieces((Id)(v < n ? v : 0), count, &nxt[0], q_out_vertex, q_out_piece);
  }
  found = warp_sum(found);
  found_edges = warp_sum(found_edges);
  if (lane_id() == 0 && found) {
    atomicAdd(&tn[1], found);
    atomicAdd(&tn[2], found_edges);
    atomicAdd(&team[GRAPHDB_CTRL_ACTIVATED_VERTICES], found);
    atomicAdd(&team[GRAPHDB_CTRL_ACTIVATED_EDGES], found_edges);
    atomicMax(&team[GRAPHDB_CTRL_DEEPEST], (u64)(level + 1));
  }
}

// SSSP, after a relaxation round: the vertices of other ranks whose distance this rank lowered
// (`changed`), with their distances, grouped by owner (`bounds`: parts + 1 segment bounds) into
// `parts` runs of `capacity` entries; counts[q] is run q's length. Every flag is cleared.
template <typename Id>
__global__ void graphdb_team_sssp_compact(unsigned char* changed, const double* dist, i64 n,
                                          const i64* bounds, int parts, int self, i64 capacity,
                                          Id* ids, double* values, u64* counts) {
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 num_warps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 base = warp * 32; base < n; base += num_warps * 32) {
    const i64 v = base + lane_id();
    int owner = -1;
    if (v < n && changed[v]) {
      changed[v] = 0;
      owner = 0;
      while (owner + 1 < parts && v >= bounds[owner + 1]) ++owner;
      if (owner == self) owner = -1;
    }
    if (!__any_sync(GRAPHDB_FULL_MASK, owner >= 0)) continue;
    for (int q = 0; q < parts; ++q) {
      if (q == self) continue;
      const u64 at = warp_reserve(&counts[q], owner == q ? 1 : 0);
      if (owner == q) {
        ids[q * capacity + (i64)at] = (Id)v;
        values[q * capacity + (i64)at] = dist[v];
      }
    }
  }
}

// SSSP: the distances peers found for this rank's vertices (`received` of them), merged by MIN;
// a vertex lowered below `hi` joins the next queue once (stamp, as in the relaxation).
template <typename Id>
__global__ void graphdb_team_sssp_apply(const Id* ids, const double* values, i64 received,
                                        const i64* offsets, double* dist, int* stamp,
                                        Id* q_out_vertex, int* q_out_piece, u64* ctrl, int step,
                                        double hi, int K) {
  u64* nxt = ctrl + TEAM_SLOT(step + 1);
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 num_warps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 base = warp * 32; base < received; base += num_warps * 32) {
    const i64 i = base + lane_id();
    Id w = 0;
    i64 count = 0;
    if (i < received) {
      w = ids[i];
      const double nd = values[i];
      const double old = atomic_min_nonneg(&dist[w], nd);
      if (nd < old && nd < hi && atomicExch(&stamp[w], step) != step)
        count = num_pieces(offsets[w + 1] - offsets[w], K);
    }
    append_pieces(w, count, &nxt[0], q_out_vertex, q_out_piece);
  }
}

// PageRank: a rank's contributions (its range lo..lo+count-1) and its two totals into its slot
// of the exchange buffer (the totals at `widest`, as two doubles), in one launch.
extern "C" __global__ void graphdb_team_pack(const float* contrib, i64 lo, i64 count, float* slot,
                                             i64 widest, const double* dangling,
                                             const double* change) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
    slot[i] = contrib[lo + i];
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    double* tail = reinterpret_cast<double*>(slot + widest);
    tail[0] = *dangling;
    tail[1] = *change;
  }
}

// PageRank: the peers' slots (`parts` of `stride` floats; rank q's vertices bounds[q]..) into
// their ranges of the contributions, and the totals of every slot summed in rank order (the same
// sum on every rank), in one launch.
extern "C" __global__ void graphdb_team_unpack(const float* slots, i64 stride, const i64* bounds,
                                               int parts, int self, i64 widest, float* contrib,
                                               double* dangling, double* change) {
  const i64 n = bounds[parts];
  const i64 step = (i64)gridDim.x * blockDim.x;
  for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += step) {
    int q = 0;
    while (q + 1 < parts && v >= bounds[q + 1]) ++q;
    if (q != self) contrib[v] = slots[(i64)q * stride + (v - bounds[q])];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    double a = 0.0, b = 0.0;
    for (int q = 0; q < parts; ++q) {
      const double* tail = reinterpret_cast<const double*>(slots + (i64)q * stride + widest);
      a += tail[0];
      b += tail[1];
    }
    *dangling = a;
    *change = b;
  }
}
