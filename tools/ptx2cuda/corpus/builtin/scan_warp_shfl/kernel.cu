// Per-block exclusive prefix sums of ints: warps scan with __shfl_up_sync,
// the warp totals are scanned by the first warp through shared memory, and
// each thread adds its warp's offset.
#ifndef BLOCK
#define BLOCK 256
#endif

#define WARPS (BLOCK / 32)

__device__ __forceinline__ int warp_inclusive_scan(int x, int lane)
{
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, x, off);
        if (lane >= off)
            x += y;
    }
    return x;
}

__global__ void __launch_bounds__(BLOCK) scan_exclusive_int(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int warp_total[WARPS];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int i = blockIdx.x * BLOCK + t;
    const int v = i < n ? in[i] : 0;
    const int x = warp_inclusive_scan(v, lane);
    if (lane == 31)
        warp_total[warp] = x;
    __syncthreads();
    if (warp == 0) {
        int w = lane < WARPS ? warp_total[lane] : 0;
        w = warp_inclusive_scan(w, lane);
        if (lane < WARPS)
            warp_total[lane] = w;
    }
    __syncthreads();
    const int offset = warp > 0 ? warp_total[warp - 1] : 0;
    if (i < n)
        out[i] = offset + x - v;
}
