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
