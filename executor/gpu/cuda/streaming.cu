// Kernels of the streamed operators (executor/streaming): graphs larger than the device.
//
// Subway with the host gather: relaxation of one loaded piece of a (Sub)CSR (the device-built
// SubCSR and its zero-copy gather are in subway.cu). Edge-centric: a pull PageRank step over
// one chunk of the in-CSR. GTS: BFS and PageRank steps that decode one slotted page on the device.
//
// Values of the traversals are float64 >= 0 (depth, distance, component id): the bit patterns of
// non-negative doubles order like the doubles, so atomicMin on unsigned long long is a float min.

#define WARP 32

__device__ __forceinline__ double vload(const double* p) { return *(const volatile double*)p; }

// One warp per row of the piece (grid-stride). pass 0: every row relaxes (a SubCSR: its rows are
// the iteration's snapshot); pass 1: rows whose snapshot flag is set (whole partitions); pass 2: an
// inner iteration, rows whose label is set again, read-and-clear, rows cut by the piece excluded
// (only part of their edges is loaded). ALGO 0 BFS (+1), 1 SSSP (+w), 2 WCC (min label).
template <int ALGO>
__device__ void subway_relax(const long long* __restrict__ off, const int* __restrict__ targets,
                             const double* __restrict__ weights, const int* __restrict__ rows,
                             long long first_row, long long nrows, int head_split, int tail_split,
                             double* value, unsigned char* label,
                             const unsigned char* __restrict__ snap, int pass, int* changed) {
    const int lane = threadIdx.x & (WARP - 1);
    const long long warps = (long long)gridDim.x * blockDim.x / WARP;
    for (long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / WARP; r < nrows;
         r += warps) {
        const long long v = rows ? (long long)rows[r] : first_row + r;
        if (pass == 1 && !snap[v]) continue;
        if (pass == 2) {
            bool cut = (r == 0 && head_split) || (r == nrows - 1 && tail_split);
            if (cut || !*(volatile unsigned char*)&label[v]) continue;
            __syncwarp();
            if (lane == 0) label[v] = 0;
            __threadfence();  // the clear is visible before the value is read
        }
        const double s = vload(&value[v]);
        if (ALGO != 2 && s == __longlong_as_double(0x7FF0000000000000LL)) continue;
        for (long long i = off[r] + lane; i < off[r + 1]; i += WARP) {
            const int u = targets[i];
            double cand = s;
            if (ALGO == 0) cand = s + 1.0;
            if (ALGO == 1) cand = s + (weights ? weights[i] : 1.0);
            if (cand < vload(&value[u])) {
                unsigned long long old = atomicMin((unsigned long long*)&value[u],
                                                   (unsigned long long)__double_as_longlong(cand));
                if (cand < __longlong_as_double((long long)old)) {
                    label[u] = 1;
                    *changed = 1;
                }
            }
        }
    }
}

#define RELAX_ARGS                                                                           \
    const long long *off, const int *targets, const double *weights, const int *rows,        \
        long long first_row, long long nrows, int head_split, int tail_split, double *value, \
        unsigned char *label, const unsigned char *snap, int pass, int *changed
#define RELAX_CALL off, targets, weights, rows, first_row, nrows, head_split, tail_split, value, \
                   label, snap, pass, changed

extern "C" __global__ void graphdb_subway_relax_bfs(RELAX_ARGS) { subway_relax<0>(RELAX_CALL); }
extern "C" __global__ void graphdb_subway_relax_sssp(RELAX_ARGS) { subway_relax<1>(RELAX_CALL); }
extern "C" __global__ void graphdb_subway_relax_wcc(RELAX_ARGS) { subway_relax<2>(RELAX_CALL); }

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

// Edge-centric PageRank, the vertex passes around an iteration's chunks (grid-stride, one
// atomic per block for a sum; sums[] is zeroed before the first). Dangling vertices are those
// with inv == 0 (no out-edges). prepare: contrib = rank * inv, next = 0, sums[0] += dangling rank.
// update: next = d * next + teleport + d * sums[0] / n (the new ranks), sums[1] += |new - rank|.
__device__ __forceinline__ void ec_block_add(double v, double* out) {
    __shared__ double part[32];
    for (int d = WARP / 2; d; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    const int lane = threadIdx.x & (WARP - 1), warp = threadIdx.x / WARP;
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x / WARP) ? part[lane] : 0.0;
        for (int d = WARP / 2; d; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
        if (lane == 0 && v != 0.0) atomicAdd(out, v);
    }
}

extern "C" __global__ void graphdb_ec_pagerank_prepare(const double* __restrict__ rank,
                                                       const double* __restrict__ inv, long long n,
                                                       double* contrib, double* next,
                                                       double* sums) {
    double dangling = 0.0;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x) {
        const double r = rank[v], w = inv[v];
        contrib[v] = r * w;
        next[v] = 0.0;
        if (w == 0.0) dangling += r;
    }
    ec_block_add(dangling, sums);
}

extern "C" __global__ void graphdb_ec_pagerank_update(double* next, const double* __restrict__ rank,
                                                      long long n, double damping, double teleport,
                                                      double inv_n, double* sums) {
    const double base = teleport + damping * sums[0] * inv_n;
    double change = 0.0;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x) {
        const double r = damping * next[v] + base;
        next[v] = r;
        change += fabs(r - rank[v]);
    }
    ec_block_add(change, sums + 1);
}

// ---- GTS slotted pages (storage/pages.py has the layout) ----------------------------------
__device__ __forceinline__ unsigned int rd_u32(const unsigned char* p) {
    return (unsigned)p[0] | ((unsigned)p[1] << 8) | ((unsigned)p[2] << 16) | ((unsigned)p[3] << 24);
}
__device__ __forceinline__ long long rd_le(const unsigned char* p, int width) {
    unsigned long long x = 0;
    for (int b = 0; b < width; ++b) x |= (unsigned long long)p[b] << (8 * b);
    return (long long)x;
}

struct PageView {
    const unsigned char* page;
    unsigned int size, slots;
    int pid_bytes, slot_bytes;
    __device__ PageView(const unsigned char* pg) : page(pg) {
        size = rd_u32(pg + 12);
        slots = rd_u32(pg + 32);
        pid_bytes = pg[44];
        slot_bytes = pg[45];
    }
    // slot i: (vertex u64, record offset u32) at size - 12 (i + 1)
    __device__ long long vertex(unsigned i) const {
        const unsigned char* s = page + size - 12 * (i + 1);
        return (long long)rd_u32(s) | ((long long)rd_u32(s + 4) << 32);
    }
    __device__ unsigned record(unsigned i) const { return rd_u32(page + size - 12 * (i + 1) + 8); }
};

// BFS level on one page: vertices at depth `level` visit their neighbours (record ids); a newly
// reached neighbour marks the page of its record for the next level (GTS's nextPIDSet).
extern "C" __global__ void graphdb_gts_bfs_page(const unsigned char* pg,
                                                const long long* __restrict__ page_first_vertex,
                                                int* depth, int level, unsigned char* next_pages,
                                                int* reached) {
    PageView p(pg);
    const int lane = threadIdx.x & (WARP - 1);
    const int r = p.pid_bytes + p.slot_bytes;
    const unsigned warps = gridDim.x * blockDim.x / WARP;
    for (unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) / WARP; i < p.slots; i += warps) {
        if (depth[p.vertex(i)] != level) continue;
        const unsigned rec = p.record(i);
        const unsigned n = rd_u32(pg + rec);
        for (unsigned k = lane; k < n; k += WARP) {
            const unsigned char* rid = pg + rec + 4 + (size_t)k * r;
            const long long pid = rd_le(rid, p.pid_bytes);
            const long long u = page_first_vertex[pid] + rd_le(rid + p.pid_bytes, p.slot_bytes);
            if (depth[u] < 0) {
                depth[u] = level + 1;
                next_pages[pid] = 1;
                *reached = 1;
            }
        }
    }
}

// PageRank on one page of the in-direction (pull): each slot's vertex sums its in-neighbours'
// contributions (a large page holds part of one hub's list, hence the atomic add).
extern "C" __global__ void graphdb_gts_pagerank_page(const unsigned char* pg,
                                                     const long long* __restrict__ page_first_vertex,
                                                     const double* __restrict__ contrib,
                                                     double* next) {
    PageView p(pg);
    const int lane = threadIdx.x & (WARP - 1);
    const int r = p.pid_bytes + p.slot_bytes;
    const unsigned warps = gridDim.x * blockDim.x / WARP;
    for (unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) / WARP; i < p.slots; i += warps) {
        const unsigned rec = p.record(i);
        const unsigned n = rd_u32(pg + rec);
        double s = 0.0;
        for (unsigned k = lane; k < n; k += WARP) {
            const unsigned char* rid = pg + rec + 4 + (size_t)k * r;
            const long long pid = rd_le(rid, p.pid_bytes);
            s += contrib[page_first_vertex[pid] + rd_le(rid + p.pid_bytes, p.slot_bytes)];
        }
        for (int d = WARP / 2; d; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
        if (lane == 0 && s != 0.0) atomicAdd(&next[p.vertex(i)], s);
    }
}
