// Subway on the device (executor/streaming/gpu.py, gather="device"): the SubCSR's vertex side is
// built on the GPU and its edges are read by a flattened, coalesced gather.
//
// Steps 1-5 of Subway's GENSUBCSR (prefix sum of the active flags, the active ids, the reset of
// inactive degrees, their prefix sum, the offsets) run as two passes over tiles of TILE vertices:
// graphdb_subway_count (per tile: active vertices, active rows that have edges, their edges) and,
// after an exclusive scan of the tile sums, graphdb_subway_compact (ids and offsets in vertex
// order). The CSR offsets are resident, so nothing of this crosses the bus; only the three totals
// are read by the host, once per outer iteration. Active vertices without edges get no row.
//
// Step 6 (the edges) is graphdb_subway_stream_*: consecutive threads take consecutive edges of
// the SubCSR (edge -> row by binary search in the offsets, bounded by the rows of the block's
// tile), so a warp reads contiguous host memory within a row and across adjacent active rows.
// The edges are read straight from the page-locked CSR (zero copy) and relaxed at once; in the
// asynchronous mode they are also stored into the device piece buffer for the inner iterations.
// The same kernel relaxes a whole-CSR partition copied by DMA (ids null, edges in the buffer).
//
// Values are float64 >= 0 (depth, distance, component id): their bit patterns order like the
// doubles, so atomicMin on unsigned long long is a float min.

#define SUBWAY_TILE_THREADS 256
#define SUBWAY_TILE_ITEMS 16
#define SUBWAY_STREAM_ITEMS 8
#define SUBWAY_WARP 32

typedef long long i64;
typedef unsigned long long u64;

__device__ __forceinline__ double sw_vload(const double* p) { return *(const volatile double*)p; }

// Relax the edge (v -> u, weight w) from v's value s: BFS s + 1, SSSP s + w, WCC (min label) s.
// Sets u's label when u's value drops; returns whether it did.
template <int ALGO>
__device__ __forceinline__ bool sw_relax(double s, int u, double w, double* value,
                                         unsigned char* label) {
    const double cand = ALGO == 0 ? s + 1.0 : (ALGO == 1 ? s + w : s);
    if (!(cand < sw_vload(&value[u]))) return false;
    const u64 old = atomicMin((u64*)&value[u], (u64)__double_as_longlong(cand));
    if (!(cand < __longlong_as_double((i64)old))) return false;
    label[u] = 1;
    return true;
}

// Block-wide exclusive scan of one i64 per thread (blockDim.x == SUBWAY_TILE_THREADS).
__device__ __forceinline__ i64 sw_block_exclusive(i64 x, i64* total) {
    __shared__ i64 warp_sums[SUBWAY_TILE_THREADS / SUBWAY_WARP];
    const int lane = threadIdx.x & (SUBWAY_WARP - 1), warp = threadIdx.x / SUBWAY_WARP;
    i64 incl = x;
    for (int d = 1; d < SUBWAY_WARP; d <<= 1) {
        i64 y = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += y;
    }
    __syncthreads();  // warp_sums may still be read by a previous call
    if (lane == SUBWAY_WARP - 1) warp_sums[warp] = incl;
    __syncthreads();
    i64 before = 0, all = 0;
    for (int w = 0; w < SUBWAY_TILE_THREADS / SUBWAY_WARP; ++w) {
        const i64 s = warp_sums[w];
        if (w < warp) before += s;
        all += s;
    }
    *total = all;
    return before + incl - x;
}

// mode 0: active = label[v] (counted), a row = active with edges (off[v+1] > off[v]);
// mode 1: a row = value[v] finite (the result columns), no edges.
__device__ __forceinline__ void sw_flags(int mode, i64 v, const unsigned char* label,
                                         const i64* off, const double* value, int* act, int* row,
                                         i64* deg) {
    if (mode == 0) {
        *act = label[v] != 0;
        *deg = *act ? off[v + 1] - off[v] : 0;
        *row = *deg > 0;
    } else {
        const double x = value[v];
        *act = x < __longlong_as_double(0x7FF0000000000000LL);
        *row = *act;
        *deg = 0;
    }
}

extern "C" __global__ void graphdb_subway_count(const unsigned char* __restrict__ label,
                                                const i64* __restrict__ off,
                                                const double* __restrict__ value, i64 n, int mode,
                                                i64* tile_active, i64* tile_rows,
                                                i64* tile_edges) {
    const i64 tile = blockIdx.x;
    const i64 first = tile * SUBWAY_TILE_THREADS * SUBWAY_TILE_ITEMS + threadIdx.x;
    i64 a = 0, r = 0, e = 0;
    for (int k = 0; k < SUBWAY_TILE_ITEMS; ++k) {
        const i64 v = first + (i64)k * SUBWAY_TILE_THREADS;  // coalesced flag reads
        if (v >= n) break;
        int act, row;
        i64 deg;
        sw_flags(mode, v, label, off, value, &act, &row, &deg);
        a += act;
        r += row;
        e += deg;
    }
    i64 ta, tr, te;
    sw_block_exclusive(a, &ta);
    sw_block_exclusive(r, &tr);
    sw_block_exclusive(e, &te);
    if (threadIdx.x == 0) {
        tile_active[tile] = ta;
        tile_rows[tile] = tr;
        tile_edges[tile] = te;
    }
}

// Rows in vertex order: thread t of a tile owns its vertices t*ITEMS.. (consecutive, so the ids
// come out sorted). tile_rows_before / tile_edges_before: exclusive scans of the count pass.
// mode 0 writes ids and the SubCSR offsets; mode 1 writes ids and out_value (as double, or as
// int64 when as_int: BFS depths), the reached vertices and their values.
extern "C" __global__ void graphdb_subway_compact(const unsigned char* __restrict__ label,
                                                  const i64* __restrict__ off,
                                                  const double* __restrict__ value, i64 n,
                                                  int mode, int as_int,
                                                  const i64* __restrict__ tile_rows_before,
                                                  const i64* __restrict__ tile_edges_before,
                                                  int* ids, i64* sub_off, double* out_value) {
    const i64 tile = blockIdx.x;
    const i64 first = (tile * SUBWAY_TILE_THREADS + threadIdx.x) * SUBWAY_TILE_ITEMS;
    i64 r = 0, e = 0;
    for (int k = 0; k < SUBWAY_TILE_ITEMS; ++k) {
        const i64 v = first + k;
        if (v >= n) break;
        int act, row;
        i64 deg;
        sw_flags(mode, v, label, off, value, &act, &row, &deg);
        r += row;
        e += deg;
    }
    i64 tr, te;
    i64 rpos = tile_rows_before[tile] + sw_block_exclusive(r, &tr);
    i64 epos = tile_edges_before[tile] + sw_block_exclusive(e, &te);
    for (int k = 0; k < SUBWAY_TILE_ITEMS; ++k) {
        const i64 v = first + k;
        if (v >= n) break;
        int act, row;
        i64 deg;
        sw_flags(mode, v, label, off, value, &act, &row, &deg);
        if (!row) continue;
        ids[rpos] = (int)v;
        if (mode == 0) {
            sub_off[rpos] = epos;
            epos += deg;
        } else if (as_int) {
            ((i64*)out_value)[rpos] = (i64)value[v];
        } else {
            out_value[rpos] = value[v];
        }
        ++rpos;
    }
}

// The last row r in [lo, hi] with off[r] <= e (off[lo] <= e).
__device__ __forceinline__ i64 sw_row_of(const i64* __restrict__ off, i64 lo, i64 hi, i64 e) {
    while (lo < hi) {
        const i64 mid = lo + (hi - lo + 1) / 2;
        if (off[mid] <= e) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// The rows holding edges first..last of rows lo..hi, into rows[0..1] (shared memory): thread 0
// searches, then the block synchronises so that every thread reads them.
__device__ __forceinline__ void sw_block_rows(const i64* __restrict__ off, i64 lo, i64 hi,
                                              i64 first, i64 last, i64* rows) {
    if (threadIdx.x == 0) {
        const i64 ra = sw_row_of(off, lo, hi, first);
        rows[0] = ra;
        rows[1] = sw_row_of(off, ra, hi, last);
    }
    __syncthreads();
}

// Relax edges [e0, e1) of rows row_lo..row_hi of `off` (SubCSR offsets with ids, or the CSR
// offsets with ids null). Edge e of row r sits at src_t[start + e], start = csr_off[ids[r]] -
// off[r] (a SubCSR read from the host CSR) or src_shift (a partition in the device buffer).
// snap (partitions): only rows whose snapshot flag is set relax. out_t/out_w (asynchronous
// SubCSR): the edges are also stored at e - e0 for the inner iterations.
template <int ALGO>
__device__ void sw_stream(const i64* __restrict__ off, const int* __restrict__ ids,
                          const i64* __restrict__ csr_off, i64 row_lo, i64 row_hi, i64 e0, i64 e1,
                          u64 src_t_ptr, u64 src_w_ptr, i64 src_shift, int* out_t, double* out_w,
                          double* value, unsigned char* label, const unsigned char* snap) {
    const int* src_t = (const int*)src_t_ptr;
    const double* src_w = (const double*)src_w_ptr;
    __shared__ i64 rows[2];
    const i64 span = (i64)blockDim.x * SUBWAY_STREAM_ITEMS;
    for (i64 t0 = e0 + (i64)blockIdx.x * span; t0 < e1; t0 += (i64)gridDim.x * span) {
        const i64 t1 = min(t0 + span, e1);
        __syncthreads();  // every thread has read the previous span's rows
        sw_block_rows(off, row_lo, row_hi, t0, t1 - 1, rows);
        const i64 ra = rows[0], rb = rows[1];
        int tgt[SUBWAY_STREAM_ITEMS];
        double w[SUBWAY_STREAM_ITEMS];
        i64 vert[SUBWAY_STREAM_ITEMS];
#pragma unroll
        for (int k = 0; k < SUBWAY_STREAM_ITEMS; ++k) {
            const i64 e = t0 + (i64)k * blockDim.x + threadIdx.x;
            vert[k] = -1;
            if (e < t1) {
                const i64 r = sw_row_of(off, ra, rb, e);
                const i64 v = ids ? (i64)ids[r] : r;
                if (!snap || snap[v]) {
                    const i64 pos = (ids ? csr_off[v] - off[r] : src_shift) + e;
                    vert[k] = v;
                    tgt[k] = src_t[pos];
                    w[k] = (ALGO == 1 && src_w) ? src_w[pos] : 1.0;
                }
            }
        }
#pragma unroll
        for (int k = 0; k < SUBWAY_STREAM_ITEMS; ++k) {
            if (vert[k] < 0) continue;
            const int u = tgt[k];
            if (out_t) {
                const i64 e = t0 + (i64)k * blockDim.x + threadIdx.x;
                out_t[e - e0] = u;
                if (ALGO == 1 && out_w) out_w[e - e0] = w[k];
            }
            const double s = sw_vload(&value[vert[k]]);
            if (ALGO != 2 && s == __longlong_as_double(0x7FF0000000000000LL)) continue;
            sw_relax<ALGO>(s, u, w[k], value, label);
        }
    }
}

#define SW_STREAM_ARGS                                                                      \
    const i64 *off, const int *ids, const i64 *csr_off, i64 row_lo, i64 row_hi, i64 e0,    \
        i64 e1, u64 src_t, u64 src_w, i64 src_shift, int *out_t, double *out_w,             \
        double *value, unsigned char *label, const unsigned char *snap
#define SW_STREAM_CALL off, ids, csr_off, row_lo, row_hi, e0, e1, src_t, src_w, src_shift, out_t, \
                       out_w, value, label, snap

extern "C" __global__ void graphdb_subway_stream_bfs(SW_STREAM_ARGS) { sw_stream<0>(SW_STREAM_CALL); }
extern "C" __global__ void graphdb_subway_stream_sssp(SW_STREAM_ARGS) { sw_stream<1>(SW_STREAM_CALL); }
extern "C" __global__ void graphdb_subway_stream_wcc(SW_STREAM_ARGS) { sw_stream<2>(SW_STREAM_CALL); }

// An inner iteration (asynchronous mode) on the loaded piece, edges [e0, e1) of `off`'s rows in
// buf_t/buf_w at e - e0: a warp per row whose label is set again (read and clear); rows cut by
// the piece do not relax (only part of their edges is loaded).
template <int ALGO>
__device__ void sw_inner(const i64* __restrict__ off, const int* __restrict__ ids, i64 row_lo,
                         i64 row_hi, i64 e0, i64 e1, const int* __restrict__ buf_t,
                         const double* __restrict__ buf_w, double* value, unsigned char* label,
                         int* changed) {
    __shared__ i64 rows[2];
    sw_block_rows(off, row_lo, row_hi, e0, e1 - 1, rows);
    const i64 ra = rows[0], rb = rows[1];
    const int lane = threadIdx.x & (SUBWAY_WARP - 1);
    const i64 warps = (i64)gridDim.x * blockDim.x / SUBWAY_WARP;
    for (i64 r = ra + ((i64)blockIdx.x * blockDim.x + threadIdx.x) / SUBWAY_WARP; r <= rb;
         r += warps) {
        const i64 lo = off[r], hi = off[r + 1];
        if (lo < e0 || hi > e1 || lo == hi) continue;
        const i64 v = ids ? (i64)ids[r] : r;
        if (!*(volatile unsigned char*)&label[v]) continue;
        __syncwarp();
        if (lane == 0) label[v] = 0;
        __threadfence();  // the clear is visible before the value is read
        const double s = sw_vload(&value[v]);
        if (ALGO != 2 && s == __longlong_as_double(0x7FF0000000000000LL)) continue;
        for (i64 i = lo + lane; i < hi; i += SUBWAY_WARP) {
            const double w = (ALGO == 1 && buf_w) ? buf_w[i - e0] : 1.0;
            if (sw_relax<ALGO>(s, buf_t[i - e0], w, value, label)) *changed = 1;
        }
    }
}

#define SW_INNER_ARGS                                                                       \
    const i64 *off, const int *ids, i64 row_lo, i64 row_hi, i64 e0, i64 e1, const int *buf_t, \
        const double *buf_w, double *value, unsigned char *label, int *changed
#define SW_INNER_CALL off, ids, row_lo, row_hi, e0, e1, buf_t, buf_w, value, label, changed

extern "C" __global__ void graphdb_subway_inner_bfs(SW_INNER_ARGS) { sw_inner<0>(SW_INNER_CALL); }
extern "C" __global__ void graphdb_subway_inner_sssp(SW_INNER_ARGS) { sw_inner<1>(SW_INNER_CALL); }
extern "C" __global__ void graphdb_subway_inner_wcc(SW_INNER_ARGS) { sw_inner<2>(SW_INNER_CALL); }
