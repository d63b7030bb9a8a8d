// Warp-level primitives: shuffle reductions, broadcast, scan and votes.
#include <cstdio>
#include <cuda_runtime.h>

#define FULL_MASK 0xffffffff

__inline__ __device__ float warpReduceSum(float val) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        val += __shfl_down_sync(FULL_MASK, val, offset);
    return val;
}

__inline__ __device__ int warpAllReduceMax(int val) {
    for (int mask = 16; mask > 0; mask >>= 1)
        val = max(val, __shfl_xor_sync(FULL_MASK, val, mask, 32));
    return val;
}

__device__ int warpInclusiveScan(int v) {
    int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
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
    float first = __shfl_sync(FULL_MASK, v, 0);
    unsigned ballot = (unsigned)__ballot_sync(FULL_MASK, v > 10.0f);
    int anyBig = __any_sync(FULL_MASK, v > 60.0f);
    int allPos = __all_sync(FULL_MASK, v >= 0.0f);
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
    cudaMalloc(&din, sizeof(h));
    cudaMalloc(&dsums, warps * sizeof(float));
    cudaMalloc(&dmax, warps * sizeof(int));
    cudaMalloc(&dscan, n * sizeof(int));
    cudaMalloc(&dvotes, warps * 3 * sizeof(unsigned));
    cudaMemcpy(din, h, sizeof(h), cudaMemcpyHostToDevice);
    warpOps<<<2, 64>>>(din, dsums, dmax, dscan, dvotes);
    float sums[warps];
    int maxes[warps], scans[n];
    unsigned votes[warps * 3];
    cudaMemcpy(sums, dsums, sizeof(sums), cudaMemcpyDeviceToHost);
    cudaMemcpy(maxes, dmax, sizeof(maxes), cudaMemcpyDeviceToHost);
    cudaMemcpy(scans, dscan, sizeof(scans), cudaMemcpyDeviceToHost);
    cudaMemcpy(votes, dvotes, sizeof(votes), cudaMemcpyDeviceToHost);
    for (int w = 0; w < warps; ++w)
        printf("warp %d: sum=%.0f max=%d scan31=%d ballot=%u any=%u all=%u\n", w, sums[w],
               maxes[w], scans[w * 32 + 31], votes[w * 3], votes[w * 3 + 1], votes[w * 3 + 2]);
    cudaFree(din); cudaFree(dsums); cudaFree(dmax); cudaFree(dscan); cudaFree(dvotes);
    return 0;
}
