// Shared device helpers for graphdb's kernels (inlined into each module by executor/gpu/runtime.py,
// so CuPy's kernel cache sees header changes). NVRTC has no standard headers: plain types only.
#pragma once

typedef long long i64;
typedef unsigned long long u64;

#define GRAPHDB_FULL_MASK 0xffffffffu

namespace graphdb {

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }

template <typename T>
__device__ __forceinline__ T warp_sum(T x) {
  for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(GRAPHDB_FULL_MASK, x, d);
  return x;
}

template <typename T>
__device__ __forceinline__ T warp_min(T x) {
  for (int d = 16; d > 0; d >>= 1) {
    T y = __shfl_xor_sync(GRAPHDB_FULL_MASK, x, d);
    x = y < x ? y : x;
  }
  return x;
}

template <typename T>
__device__ __forceinline__ T warp_max(T x) {
  for (int d = 16; d > 0; d >>= 1) {
    T y = __shfl_xor_sync(GRAPHDB_FULL_MASK, x, d);
    x = y > x ? y : x;
  }
  return x;
}

// Reserve `count` slots of an array whose length is *counter; returns this lane's first slot.
// One atomic per warp instead of one per lane: appends to a frontier are the hottest atomics of
// a traversal. All 32 lanes must call it (count = 0 for lanes with nothing to append).
__device__ __forceinline__ u64 warp_reserve(u64* counter, u64 count) {
  const int lane = lane_id();
  u64 incl = count;
  for (int d = 1; d < 32; d <<= 1) {
    u64 y = __shfl_up_sync(GRAPHDB_FULL_MASK, incl, d);
    if (lane >= d) incl += y;
  }
  const u64 total = __shfl_sync(GRAPHDB_FULL_MASK, incl, 31);
  u64 base = 0;
  if (lane == 31 && total) base = atomicAdd(counter, total);
  base = __shfl_sync(GRAPHDB_FULL_MASK, base, 31);
  return base + incl - count;
}

// min for non-negative doubles through their bit patterns, which order the same way.
__device__ __forceinline__ double atomic_min_nonneg(double* addr, double value) {
  return __longlong_as_double(
      atomicMin(reinterpret_cast<long long*>(addr), __double_as_longlong(value)));
}

__device__ __forceinline__ int atomic_cas_id(int* addr, int expected, int desired) {
  return atomicCAS(addr, expected, desired);
}
__device__ __forceinline__ long long atomic_cas_id(long long* addr, long long expected,
                                                   long long desired) {
  return (long long)atomicCAS(reinterpret_cast<unsigned long long*>(addr),
                              (unsigned long long)expected, (unsigned long long)desired);
}

// Block-wide sum of one value per thread (blockDim.x a multiple of 32, at most 1024).
// The result is valid in thread 0.
template <typename T>
__device__ __forceinline__ T block_sum(T x) {
  __shared__ T partial[32];
  x = warp_sum(x);
  const int warp = threadIdx.x >> 5;
  __syncthreads();  // `partial` may still be read from a previous call
  if (lane_id() == 0) partial[warp] = x;
  __syncthreads();
  T total = 0;
  if (warp == 0) {
    total = lane_id() < (int)(blockDim.x >> 5) ? partial[lane_id()] : T(0);
    total = warp_sum(total);
  }
  return total;
}

}  // namespace graphdb
