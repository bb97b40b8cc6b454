// Local clustering coefficient (Graphalytics LCC), degree-ordered (see lcc/cpu.py's docstring):
// for every vertex v, the sum of w(a, b) over the neighbour pairs {a, b} of v found from their
// lower-ranked end a: b in U+(a) (a's neighbours of higher rank in the degree order) and b in
// N(v). One warp per (v, a) entry of the symmetric neighbour CSR U: the lanes walk U+(a) and
// binary-search each b in v's sorted U row. In the degree order |U+(a)| <= sqrt(2|E|), so a hub
// costs what its higher-ranked neighbours cost, not its degree squared.
#include "graphdb/common.cuh"

using namespace graphdb;

template <typename Id>
__device__ __forceinline__ bool sorted_contains(const Id* row, i64 len, Id x) {
  i64 lo = 0, hi = len;
  while (lo < hi) {
    const i64 mid = (lo + hi) >> 1;
    if (row[mid] < x) lo = mid + 1; else hi = mid;
  }
  return lo < len && row[lo] == x;
}

template <typename Id>
__global__ void graphdb_lcc_count(const i64* nbr_offsets, const Id* nbr_targets,
                                  const Id* nbr_rows, i64 nbr_entries, const i64* up_offsets,
                                  const Id* up_targets, const unsigned char* up_weights,
                                  unsigned long long* counts) {
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 num_warps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 i = warp; i < nbr_entries; i += num_warps) {
    const Id v = nbr_rows[i];
    const Id a = nbr_targets[i];
    const Id* row = nbr_targets + nbr_offsets[v];
    const i64 len = nbr_offsets[v + 1] - nbr_offsets[v];
    unsigned long long found = 0;
    for (i64 k = up_offsets[a] + lane_id(); k < up_offsets[a + 1]; k += 32)
      found += sorted_contains(row, len, up_targets[k]) ? (unsigned long long)up_weights[k] : 0ull;
    found = warp_sum(found);
    if (lane_id() == 0 && found) atomicAdd(&counts[v], found);
  }
}
