// The result path on the device (results_gpu.py): the rows of a per-vertex output, the id
// mapping, the output columns, and the aggregates a query pushes down onto a graph operator.
//
// Ordered compaction of the reached vertices, in three launches: graphdb_results_count counts
// the rows of every tile of GRAPHDB_RESULT_TILE entries, graphdb_results_scan turns the counts
// into each tile's first output slot (one block), graphdb_results_rows writes the row ids of
// each tile at its slot in entry order (ballot + popc inside warps, warp counts in shared
// memory), so rows ascend as numpy's flatnonzero gives them. Which entries are rows is the
// RESULT_DROP rule of executor/abi.py, mirrored by results.py's `kept`.
// graphdb_results_gather writes one output column: row j takes the value of vertex rows[j]
// (or the vertex id itself), converted to the output type, mapped through the user's ids when
// the column is vertex-valued.
#include "graphdb/common.cuh"

using namespace graphdb;

#define RESULT_THREADS 256
#define RESULT_ITEMS (GRAPHDB_RESULT_TILE / RESULT_THREADS)
#define SIGN_BIT 0x8000000000000000ULL

__device__ __forceinline__ bool result_kept_int(long long x, int drop) {
  if (drop == GRAPHDB_RESULT_DROP_NEGATIVE) return x >= 0;
  if (drop == GRAPHDB_RESULT_DROP_ZERO) return x != 0;
  return true;
}
__device__ __forceinline__ bool result_kept(int x, int drop) { return result_kept_int(x, drop); }
__device__ __forceinline__ bool result_kept(long long x, int drop) {
  return result_kept_int(x, drop);
}
__device__ __forceinline__ bool result_kept(double x, int drop) {
  const u64 bits = (u64)__double_as_longlong(x);
  if (drop == GRAPHDB_RESULT_DROP_POS_INF) return bits != 0x7FF0000000000000ULL;
  if (drop == GRAPHDB_RESULT_DROP_NEG_INF) return bits != 0xFFF0000000000000ULL;
  if (drop == GRAPHDB_RESULT_DROP_NEGATIVE) return x >= 0.0;
  if (drop == GRAPHDB_RESULT_DROP_ZERO) return x != 0.0;
  return true;
}

// Rows of each tile.
template <typename T>
__global__ void __launch_bounds__(RESULT_THREADS)
graphdb_results_count(const T* marks, i64 n, int drop, i64* tile_count) {
  const i64 tiles = (n + GRAPHDB_RESULT_TILE - 1) / GRAPHDB_RESULT_TILE;
  for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const i64 base = tile * GRAPHDB_RESULT_TILE;
    i64 count = 0;
#pragma unroll 4
    for (int j = 0; j < RESULT_ITEMS; ++j) {
      const i64 i = base + (i64)j * RESULT_THREADS + threadIdx.x;
      if (i < n && result_kept(marks[i], drop)) ++count;
    }
    count = block_sum(count);
    if (threadIdx.x == 0) tile_count[tile] = count;
  }
}

// Exclusive prefix sums of counts[0..n) in place, the total into total[0]; one block of
// blockDim.x threads (a multiple of 32, at most 1024), each over a contiguous chunk.
extern "C" __global__ void __launch_bounds__(1024)
graphdb_results_scan(i64* counts, i64 n, i64* total) {
  __shared__ i64 warp_total[32];
  const int t = threadIdx.x;
  const int lane = lane_id(), warp = t >> 5, warps = blockDim.x >> 5;
  const i64 per = (n + blockDim.x - 1) / blockDim.x;
  const i64 lo0 = (i64)t * per;
  const i64 lo = lo0 < n ? lo0 : n;
  const i64 hi = lo + per < n ? lo + per : n;
  i64 sum = 0;
  for (i64 i = lo; i < hi; ++i) sum += counts[i];
  i64 incl = sum;
  for (int d = 1; d < 32; d <<= 1) {
    const i64 y = __shfl_up_sync(GRAPHDB_FULL_MASK, incl, d);
    if (lane >= d) incl += y;
  }
  if (lane == 31) warp_total[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const i64 w = lane < warps ? warp_total[lane] : 0;
    i64 wi = w;
    for (int d = 1; d < 32; d <<= 1) {
      const i64 y = __shfl_up_sync(GRAPHDB_FULL_MASK, wi, d);
      if (lane >= d) wi += y;
    }
    warp_total[lane] = wi - w;
  }
  __syncthreads();
  i64 run = warp_total[warp] + incl - sum;
  for (i64 i = lo; i < hi; ++i) {
    const i64 c = counts[i];
    counts[i] = run;
    run += c;
  }
  if (t == (int)blockDim.x - 1) total[0] = run;
}

// The row ids of each tile, written from the tile's first slot in entry order.
template <typename T>
__global__ void __launch_bounds__(RESULT_THREADS)
graphdb_results_rows(const T* marks, i64 n, int drop, const i64* tile_first, i64* rows) {
  __shared__ int warp_count[RESULT_THREADS / 32];
  const int lane = lane_id(), warp = threadIdx.x >> 5;
  const unsigned below = (1u << lane) - 1u;
  const i64 tiles = (n + GRAPHDB_RESULT_TILE - 1) / GRAPHDB_RESULT_TILE;
  for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const i64 base = tile * GRAPHDB_RESULT_TILE;
    i64 next = tile_first[tile];
    for (int j = 0; j < RESULT_ITEMS; ++j) {
      const i64 i = base + (i64)j * RESULT_THREADS + threadIdx.x;
      const bool keep = i < n && result_kept(marks[i], drop);
      const unsigned ballot = __ballot_sync(GRAPHDB_FULL_MASK, keep);
      if (lane == 0) warp_count[warp] = __popc(ballot);
      __syncthreads();
      int before = 0, total = 0;
#pragma unroll
      for (int w = 0; w < RESULT_THREADS / 32; ++w) {
        const int c = warp_count[w];
        before += w < warp ? c : 0;
        total += c;
      }
      if (keep) rows[next + before + __popc(ballot & below)] = i;
      next += total;
      __syncthreads();  // warp_count is written again in the next round
    }
  }
}

template <typename T>
struct result_is_id { static const bool value = false; };
template <>
struct result_is_id<long long> { static const bool value = true; };

// out[j] = (Out) values[rows[j]] (values null: the vertex id rows[j] itself; rows null: j),
// through user_ids when it is not null (integer outputs only: vertex-valued columns).
template <typename In, typename Out>
__global__ void graphdb_results_gather(const In* values, const i64* rows, i64 k,
                                       const i64* user_ids, Out* out) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < k; j += stride) {
    const i64 i = rows ? rows[j] : j;
    Out x = values ? (Out)values[i] : (Out)i;
    if constexpr (result_is_id<Out>::value) {
      if (user_ids) x = user_ids[x];
    }
    out[j] = x;
  }
}

// Unsigned keys that order like the values (results.py: order_keys), reversed for descending.
__device__ __forceinline__ u64 order_key(long long x, int descending) {
  const u64 key = (u64)x ^ SIGN_BIT;
  return descending ? ~key : key;
}
__device__ __forceinline__ u64 order_key(double x, int descending) {
  const u64 bits = (u64)__double_as_longlong(x);
  const u64 key = (bits & SIGN_BIT) ? ~bits : (bits | SIGN_BIT);
  return descending ? ~key : key;
}

__device__ __forceinline__ void add_into(u64* slot, long long v) { atomicAdd(slot, (u64)v); }
__device__ __forceinline__ void add_into(u64* slot, double v) {
  atomicAdd(reinterpret_cast<double*>(slot), v);
}

// acc[0] min(order_key), acc[1] max(order_key), acc[2] the sum (int64 wrapping, or the bits of
// a double) of x[0..k). acc starts as {~0, 0, 0}.
template <typename T>
__global__ void graphdb_results_reduce(const T* x, i64 k, u64* acc) {
  u64 lo = ~0ULL, hi = 0;
  T sum = 0;
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < k; j += stride) {
    const T v = x[j];
    const u64 key = order_key(v, 0);
    lo = key < lo ? key : lo;
    hi = key > hi ? key : hi;
    sum += v;
  }
  lo = warp_min(lo);
  hi = warp_max(hi);
  sum = warp_sum(sum);
  if (lane_id() == 0) {
    atomicMin(&acc[0], lo);
    atomicMax(&acc[1], hi);
    add_into(&acc[2], sum);
  }
}

// count(*) per value of an integer column of a per-vertex output: hist[key[rows[j]]] += 1 for
// j < k (rows null: j). Values outside [0, bins) are counted in *outside, not binned. Lanes of a
// warp with equal keys add once together (hubs: a giant component's label).
template <typename T>
__global__ void graphdb_results_histogram(const T* key, const i64* rows, i64 k, i64 bins,
                                          unsigned long long* hist,
                                          unsigned long long* outside) {
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 base = warp * 32; base < k; base += warps * 32) {
    const i64 j = base + lane_id();
    long long x = -1;
    bool binned = false;
    if (j < k) {
      x = (long long)key[rows ? rows[j] : j];
      binned = x >= 0 && x < bins;
      if (!binned) atomicAdd(outside, 1ULL);
    }
    const unsigned peers = __match_any_sync(GRAPHDB_FULL_MASK, binned ? x : -1LL);
    if (binned && lane_id() == __ffs(peers) - 1) atomicAdd(&hist[x], (unsigned long long)__popc(peers));
  }
}

// One pass of the radix selection: hist[d] += entries whose order key matches `prefix` under
// `mask` and whose digit at `shift` is d (8-bit digits, most significant first).
template <typename T>
__global__ void graphdb_results_radix(const T* x, i64 k, int descending, u64 prefix, u64 mask,
                                      int shift, unsigned long long* hist) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < k; j += stride) {
    const u64 key = order_key(x[j], descending);
    if ((key & mask) == prefix) atomicAdd(&local[(key >> shift) & 255u], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (local[b]) atomicAdd(&hist[b], (unsigned long long)local[b]);
}

// The selected entries: every j with order key below `threshold` goes to picked[0..), and the
// first `ties` entries to arrive with key == threshold to picked[less..less + ties).
// counters[0], counters[1] start at 0.
template <typename T>
__global__ void graphdb_results_select(const T* x, i64 k, int descending, u64 threshold,
                                       i64 less, i64 ties, unsigned long long* counters,
                                       i64* picked) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < k; j += stride) {
    const u64 key = order_key(x[j], descending);
    if (key < threshold) {
      picked[atomicAdd(&counters[0], 1ULL)] = j;
    } else if (key == threshold) {
      const unsigned long long at = atomicAdd(&counters[1], 1ULL);
      if ((i64)at < ties) picked[less + (i64)at] = j;
    }
  }
}
