// Warp-level primitives: shuffle reductions, broadcast, scan and votes.
#include <cstdio>
#include <hip/hip_runtime.h>

#define FULL_MASK 0xffffffff

__inline__ __device__ float warpReduceSum(float val) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        val += __shfl_down(val, offset);
    return val;
}

__inline__ __device__ int warpAllReduceMax(int val) {
    for (int mask = 16; mask > 0; mask >>= 1)
        val = max(val, __shfl_xor(val, mask, 32));
    return val;
}

__device__ int warpInclusiveScan(int v) {
    int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d <<= 1) {
        int up = __shfl_up(v, d);
        if (lane >= d) v += up;
    }
    return v;
}

__global__ void warpOps(const float* in, float* sums, int* maxes, int* scans,
                        unsigned* votes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int warp = tid / 32;
    float v = in[tid];
    float s = warpReduceSum(v);
    int m = warpAllReduceMax((int)v);
    int sc = warpInclusiveScan(lane);
    float first = __shfl(v, 0);
    unsigned ballot = (unsigned)__ballot(v > 10.0f);
    int anyBig = __any(v > 60.0f);
    int allPos = __all(v >= 0.0f);
    scans[tid] = sc;
    if (lane == 0) {
        sums[warp] = s + first * 0.0f;
        maxes[warp] = m;
        votes[warp * 3 + 0] = __popc(ballot);
        votes[warp * 3 + 1] = anyBig;
        votes[warp * 3 + 2] = allPos;
    }
}

int main() {
    const int n = 128, warps = n / 32;
    float h[n];
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 50);
    float *din, *dsums;
    int *dmax, *dscan;
    unsigned* dvotes;
    hipMalloc(&din, sizeof(h));
    hipMalloc(&dsums, warps * sizeof(float));
    hipMalloc(&dmax, warps * sizeof(int));
    hipMalloc(&dscan, n * sizeof(int));
    hipMalloc(&dvotes, warps * 3 * sizeof(unsigned));
    hipMemcpy(din, h, sizeof(h), hipMemcpyHostToDevice);
    warpOps<<<2, 64>>>(din, dsums, dmax, dscan, dvotes);
    float sums[warps];
    int maxes[warps], scans[n];
    unsigned votes[warps * 3];
    hipMemcpy(sums, dsums, sizeof(sums), hipMemcpyDeviceToHost);
    hipMemcpy(maxes, dmax, sizeof(maxes), hipMemcpyDeviceToHost);
    hipMemcpy(scans, dscan, sizeof(scans), hipMemcpyDeviceToHost);
    hipMemcpy(votes, dvotes, sizeof(votes), hipMemcpyDeviceToHost);
    for (int w = 0; w < warps; ++w)
        printf("warp %d: sum=%.0f max=%d scan31=%d ballot=%u any=%u all=%u\n", w, sums[w],
               maxes[w], scans[w * 32 + 31], votes[w * 3], votes[w * 3 + 1], votes[w * 3 + 2]);
    hipFree(din); hipFree(dsums); hipFree(dmax); hipFree(dscan); hipFree(dvotes);
    return 0;
}
