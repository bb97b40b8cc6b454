// A changed graph version on the device (executor/overlay_gpu.py): the bitmaps of deleted base
// positions, per-vertex counts, and the merged CSR built from the resident base and the delta.
#include "graphdb/common.cuh"

using namespace graphdb;

// Set bit p (or map[p], when map is given) of `bits` for every position; count into *again the
// bits that were set already (a position deleted twice: a damaged delta).
extern "C" __global__ void graphdb_overlay_set_bits(u64* bits, const i64* positions, i64 n,
                                                    const i64* map, u64* again) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    i64 p = positions[i];
    if (map != nullptr) p = map[p];
    const u64 mask = 1ULL << (p & 63);
    const u64 old = atomicOr(&bits[p >> 6], mask);
    if (again != nullptr && (old & mask)) atomicAdd(again, 1ULL);
  }
}

// values[index[i]] += amount, repeated indices counted each time.
extern "C" __global__ void graphdb_overlay_add_at(i64* values, const i64* index, i64 n,
                                                  i64 amount) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(reinterpret_cast<unsigned long long*>(&values[index[i]]),
              (unsigned long long)amount);
}

// One merged array, a warp per row: base row r (rows < nbase) without the positions set in
// `tomb` (none when null), its kept entries packed in order by a ballot per 32, then the row's
// delta entries. A row whose length is not offsets' counts into *bad and writes nothing past
// its end.
template <typename V>
__global__ void graphdb_overlay_merge(const i64* offsets, i64 n, i64 nbase, const i64* base_off,
                                      const V* base_vals, const u64* tomb, const i64* doff,
                                      const V* dvals, V* out, u64* bad) {
  const int lane = lane_id();
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 r = warp; r < n; r += warps) {
    const i64 end = offsets[r + 1];
    i64 pos = offsets[r];
    if (r < nbase) {
      const i64 b1 = base_off[r + 1];
      for (i64 e0 = base_off[r]; e0 < b1; e0 += 32) {
        const i64 e = e0 + lane;
        const bool keep = e < b1 && (tomb == nullptr || !((tomb[e >> 6] >> (e & 63)) & 1ULL));
        const unsigned kept = __ballot_sync(GRAPHDB_FULL_MASK, keep);
        const i64 at = pos + __popc(kept & ((1u << lane) - 1u));
        if (keep && at < end) out[at] = base_vals[e];
        pos += __popc(kept);
      }
    }
    const i64 d0 = doff[r], d1 = doff[r + 1];
    for (i64 k = d0 + lane; k < d1; k += 32) {
      const i64 at = pos + (k - d0);
      if (at < end) out[at] = dvals[k];
    }
    pos += d1 - d0;
    if (lane == 0 && pos != end) atomicAdd(bad, 1ULL);
  }
}

// sums[dst[i]] += sign[i] * values[src[i]] (float32): the edges a changed version adds (+1) or
// deletes (-1) beside its base's, added to a pull's sums (PageRank on a changed graph).
extern "C" __global__ void graphdb_overlay_scatter_add(float* sums, const i64* src,
                                                       const i64* dst, const float* sign, i64 n,
                                                       const float* values) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&sums[dst[i]], sign[i] * values[src[i]]);
}

// The stored in-CSR entries of deleted out-edges, a warp per in-row: deletions
// bounds[r]..bounds[r+1] all of in-row v[.], sorted by source u, then weight bits w. The warp
// walks the row in stored order, 32 entries at a time; an entry not set in `skip` (none when
// null) looks its (source, weight) up among the run's deletions, and the entries of one
// (source, weight) take its deletions in stored order (their rank in the warp by
// __match_any_sync, after those taken by earlier chunks: taken[a], kept at the first deletion a
// of each equal key), exactly the entries the CPU's match takes (catalog/merge.py:_match_row).
// found[k] (-1 beforehand) is deletion k's position; one left -1 found no entry. Where `spare`
// is given, it is set once a live entry's key has deletions but none left for it (matched by
// source alone, only the weights would say which of the entries go: overlay.py:match_in).
template <typename ID>
__global__ void graphdb_overlay_match_in(const i64* in_off, const ID* in_src, const double* in_w,
                                         const u64* skip, const i64* v, const i64* u,
                                         const i64* w, const i64* bounds, i64 runs, i64* taken,
                                         i64* found, u64* spare) {
  const int lane = lane_id();
  const unsigned below = (1u << lane) - 1u;
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 r = warp; r < runs; r += warps) {
    const i64 lo = bounds[r], hi = bounds[r + 1];
    const i64 row = v[lo];
    const i64 p1 = in_off[row + 1];
    for (i64 e0 = in_off[row]; e0 < p1; e0 += 32) {
      const i64 p = e0 + lane;
      i64 a = -1;  // the first deletion of this entry's (source, weight)
      i64 s = 0, x = 0;
      if (p < p1 && (skip == nullptr || !((skip[p >> 6] >> (p & 63)) & 1ULL))) {
        s = (i64)in_src[p];
        x = in_w == nullptr ? 0 : __double_as_longlong(in_w[p]);
        i64 l = lo, h = hi;
        while (l < h) {
          const i64 m = (l + h) >> 1;
          if (u[m] < s || (u[m] == s && w[m] < x)) l = m + 1; else h = m;
        }
        if (l < hi && u[l] == s && w[l] == x) a = l;
      }
      const unsigned peers = __match_any_sync(GRAPHDB_FULL_MASK, (unsigned long long)a);
      if (a >= 0) {
        const i64 k = a + taken[a] + __popc(peers & below);
        if (k < hi && u[k] == s && w[k] == x) found[k] = p;
        else if (spare != nullptr) *spare = 1ULL;
      }
      __syncwarp();
      if (a >= 0 && !(peers & below)) taken[a] += __popc(peers);
      __syncwarp();
    }
  }
}
