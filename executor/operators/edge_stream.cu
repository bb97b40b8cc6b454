// Edge-chunk streaming (WolfGraph), executor/operators/edge_stream.py: the pull sum of one chunk
// of an in-CSR's edges into `next` (next[v] += sum of contrib[u] over the chunk's in-edges u -> v).
// The numeric step of the algorithm around it (PageRank's update) is the family's own kernel.

#define WARP 32

// Edge-centric PageRank, pull: rows first_row.. of the in-CSR, a chunk of its edges (sources);
// `off` holds the chunk's row offsets clipped to it (off[0] = 0, off[nrows] = nedges).
// Balanced by edges, not rows: each thread takes EC_ITEMS consecutive edges (one vectorised load
// of their sources, then all their gathers in flight), finds the row of its first edge by binary
// search and walks the rows from there, adding each row's partial sum atomically. A warp per row
// (the earlier kernel) left a hub's hundreds of thousands of edges to one warp and most lanes
// idle on R-MAT's many short rows, so a chunk's kernel took as long as its copy.
#define EC_ITEMS 16
extern "C" __global__ void graphdb_ec_pagerank_edges(const long long* __restrict__ off,
                                                     const int* __restrict__ sources,
                                                     long long first_row, long long nrows,
                                                     long long nedges,
                                                     const double* __restrict__ contrib,
                                                     double* next) {
    const long long stride = (long long)gridDim.x * blockDim.x * EC_ITEMS;
    for (long long e0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * EC_ITEMS; e0 < nedges;
         e0 += stride) {
        int src[EC_ITEMS];
        if (e0 + EC_ITEMS <= nedges) {  // sources is 256-B aligned and e0 a multiple of 16
            const int4* v = reinterpret_cast<const int4*>(sources + e0);
#pragma unroll
            for (int k = 0; k < EC_ITEMS / 4; ++k) {
                const int4 x = __ldg(v + k);
                src[4 * k] = x.x;
                src[4 * k + 1] = x.y;
                src[4 * k + 2] = x.z;
                src[4 * k + 3] = x.w;
            }
        } else {
#pragma unroll
            for (int k = 0; k < EC_ITEMS; ++k) src[k] = e0 + k < nedges ? sources[e0 + k] : -1;
        }
        double val[EC_ITEMS];
#pragma unroll
        for (int k = 0; k < EC_ITEMS; ++k) val[k] = src[k] >= 0 ? __ldg(contrib + src[k]) : 0.0;
        long long lo = 0, hi = nrows;  // off[lo] <= e0 < off[hi]
        while (hi - lo > 1) {
            const long long mid = (lo + hi) >> 1;
            if (__ldg(off + mid) <= e0) lo = mid;
            else hi = mid;
        }
        long long r = lo, end = __ldg(off + lo + 1);
        double s = 0.0;
#pragma unroll
        for (int k = 0; k < EC_ITEMS; ++k) {
            if (src[k] < 0) break;
            while (e0 + k >= end) {  // next row (rows without edges in this chunk are skipped)
                if (s != 0.0) atomicAdd(&next[first_row + r], s);
                s = 0.0;
                ++r;
                end = __ldg(off + r + 1);
            }
            s += val[k];
        }
        if (s != 0.0) atomicAdd(&next[first_row + r], s);
    }
}
