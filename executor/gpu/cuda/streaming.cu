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

// Edge-centric PageRank, pull: rows first_row.. of the in-CSR, a chunk of its edges (sources).
// A row cut by the chunk adds its part atomically; the others own their sum.
extern "C" __global__ void graphdb_ec_pagerank_pull(const long long* __restrict__ off,
                                                    const int* __restrict__ sources,
                                                    long long first_row, long long nrows,
                                                    const double* __restrict__ contrib,
                                                    double* next) {
    const int lane = threadIdx.x & (WARP - 1);
    const long long warps = (long long)gridDim.x * blockDim.x / WARP;
    for (long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / WARP; r < nrows;
         r += warps) {
        double s = 0.0;
        for (long long i = off[r] + lane; i < off[r + 1]; i += WARP) s += contrib[sources[i]];
        for (int d = WARP / 2; d; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
        if (lane == 0 && s != 0.0) atomicAdd(&next[first_row + r], s);
    }
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
