// Slotted pages streamed from storage (GTS), executor/operators/page_stream.py: a BFS level and a
// pull sum over one page decoded on the device. The page layout is storage/pages.py's.

#define WARP 32

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

// The vertex a record id names, or -1 (and *bad set) when it names no page of the table or a
// slot beyond that page's vertices (`run_end`: the end of each page's vertex range). The host
// checked the page's header and records (storage.page_checks); the record ids are checked here,
// where they are read, so a page sealed again after a change never indexes outside the state.
__device__ __forceinline__ long long rid_vertex(const unsigned char* rid, int pid_bytes,
                                                int slot_bytes,
                                                const long long* __restrict__ page_first_vertex,
                                                const long long* __restrict__ run_end,
                                                long long num_pages, int* bad) {
    const long long pid = rd_le(rid, pid_bytes);
    const long long slot = rd_le(rid + pid_bytes, slot_bytes);
    if (pid < 0 || pid >= num_pages || slot < 0
        || slot >= run_end[pid] - page_first_vertex[pid]) {
        atomicOr(bad, 1);
        return -1;
    }
    return page_first_vertex[pid] + slot;
}

// BFS level on one page: vertices at depth `level` visit their neighbours (record ids); a newly
// reached neighbour marks the page of its record for the next level (GTS's nextPIDSet).
extern "C" __global__ void graphdb_gts_bfs_page(const unsigned char* pg,
                                                const long long* __restrict__ page_first_vertex,
                                                const long long* __restrict__ run_end,
                                                long long num_pages,
                                                int* depth, int level, unsigned char* next_pages,
                                                int* reached, int* bad) {
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
            const long long u = rid_vertex(rid, p.pid_bytes, p.slot_bytes, page_first_vertex,
                                           run_end, num_pages, bad);
            if (u < 0) continue;
            const long long pid = rd_le(rid, p.pid_bytes);
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
                                                     const long long* __restrict__ run_end,
                                                     long long num_pages,
                                                     const double* __restrict__ contrib,
                                                     double* next, int* bad) {
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
            const long long u = rid_vertex(rid, p.pid_bytes, p.slot_bytes, page_first_vertex,
                                           run_end, num_pages, bad);
            if (u >= 0) s += contrib[u];
        }
        for (int d = WARP / 2; d; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
        if (lane == 0 && s != 0.0) atomicAdd(&next[p.vertex(i)], s);
    }
}
