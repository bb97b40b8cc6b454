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
