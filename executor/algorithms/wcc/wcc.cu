// Weakly connected components: lock-free union-find (hooking the larger root under the smaller
// with CAS, finds with pointer jumping, after ECL-CC) and Afforest's sampling: first link every
// vertex with its first two out-neighbours, compress, find the giant component from a sample,
// then process the remaining edges only of vertices outside it. parent[v] <= v always holds, so
// each root is its component's smallest id: the label the CPU twin reports.
// Directed graphs are handled without symmetrising: an edge u -> w whose u lies in the giant
// component is seen from w's side through the in-CSR.
#include "graphdb/common.cuh"

using namespace graphdb;

template <typename Id>
__device__ __forceinline__ Id find_root(Id* parent, Id v) {
  Id cur = parent[v];
  if (cur != v) {
    Id prev = v, next;
    while (cur > (next = parent[cur])) {
      parent[prev] = next;  // pointer jumping; racing writers only ever shorten paths
      prev = cur;
      cur = next;
    }
  }
  return cur;
}

template <typename Id>
__device__ __forceinline__ void unite(Id* parent, Id u, Id v) {
  Id ru = find_root(parent, u), rv = find_root(parent, v);
  while (ru != rv) {
    if (ru < rv) {
      const Id old = atomic_cas_id(&parent[rv], rv, ru);
      if (old == rv) return;
      rv = old;  // rv was hooked meanwhile: climb on from its new parent
    } else {
      const Id old = atomic_cas_id(&parent[ru], ru, rv);
      if (old == ru) return;
      ru = old;
    }
  }
}

// Link each vertex v_lo <= v < n with its first `sample` out-neighbours (a rank of a
// partitioned run passes its range: the other rows of its shard are empty).
template <typename Id>
__global__ void graphdb_wcc_hook_sample(const i64* offsets, const Id* targets, Id* parent, i64 n,
                                        int sample, i64 v_lo) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 v = v_lo + (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
    const i64 s = offsets[v], e = offsets[v + 1];
    const i64 end = s + sample < e ? s + sample : e;
    for (i64 k = s; k < end; ++k) unite(parent, (Id)v, targets[k]);
  }
}

// Link the remaining edges (from `skip` on) of every vertex outside component `giant`; one warp
// per vertex, lanes over its edges, so hubs outside the giant component stay balanced.
template <typename Id>
__global__ void graphdb_wcc_hook_rest(const i64* offsets, const Id* targets, Id* parent, i64 n,
                                      int skip, Id giant, i64 v_lo) {
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 num_warps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 v = v_lo + warp; v < n; v += num_warps) {
    if (find_root(parent, (Id)v) == giant) continue;
    const i64 e = offsets[v + 1];
    for (i64 k = offsets[v] + skip + lane_id(); k < e; k += 32) unite(parent, (Id)v, targets[k]);
  }
}

// parent[v] = root of v, for all v. Each step of the walk is stored at once, so a thread whose
// walk passes through v jumps from there (no hooking runs meanwhile: every value stored is an
// ancestor of v, and parent[v] <= v holds throughout). On graphs with long chains (a grid's)
// the walks then share their work instead of each thread walking its whole chain.
template <typename Id>
__global__ void graphdb_wcc_compress(Id* parent, i64 n) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
    Id cur = parent[v];
    for (Id next = parent[cur]; next != cur; next = parent[cur]) {
      parent[v] = next;
      cur = next;
    }
  }
}

// Partitioned WCC: a rank's own links (v -> its forest's parent of v) united into the merged
// forest, so that what the MIN of the ranks' forests lost is hooked again.
template <typename Id>
__global__ void graphdb_wcc_replay(const Id* links, Id* parent, i64 n) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
    const Id l = links[v];
    if (l != (Id)v) unite(parent, (Id)v, l);
  }
}

// The links whose two ends the merged labels (roots) put in different components, counted.
template <typename Id>
__global__ void graphdb_wcc_disagree(const Id* links, const Id* labels, i64 n, u64* count) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  u64 c = 0;
  for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride)
    c += labels[v] != labels[links[v]] ? 1 : 0;
  c = warp_sum(c);
  if (lane_id() == 0 && c) atomicAdd(count, c);
}
