// Scaled dot-product attention for a transformer layer with 64 tokens and
// head dimension 32, focused on warp-level programming: one block of 64
// threads handles one query row; thread j computes the score against key j,
// the row max and the softmax denominator are reduced with __shfl_xor_sync
// butterflies (every lane ends with the result) and combined across the two
// warps through shared memory. Q, K and V rows are staged in shared memory.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(x)                                                          \
    do {                                                                       \
        cudaError_t err = (x);                                                 \
        if (err != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err), \
                    __FILE__, __LINE__);                                       \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

constexpr int SEQ = 64;
constexpr int HEAD_DIM = 32;
constexpr int WARPS = SEQ / 32;

__device__ __forceinline__ float warpMax(float v) {
    for (int mask = 16; mask > 0; mask >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, mask));
    return v;
}

__device__ __forceinline__ float warpSum(float v) {
    for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffffu, v, mask);
    return v;
}

// grid: one block per query; block: SEQ threads (one per key).
__global__ void attentionKernel(const float* __restrict__ Q, const float* __restrict__ K,
                                const float* __restrict__ V, float* __restrict__ out, float scale) {
    __shared__ float sQ[HEAD_DIM];
    __shared__ float sP[SEQ];
    __shared__ float sRed[WARPS];

    const int q = blockIdx.x;
    const int j = threadIdx.x;
    const int lane = j & 31, warp = j >> 5;
    if (j < HEAD_DIM) sQ[j] = Q[q * HEAD_DIM + j];
    __syncthreads();

    float score = 0.0f;
    for (int d = 0; d < HEAD_DIM; ++d) score += sQ[d] * K[j * HEAD_DIM + d];
    score *= scale;

    // Row max across the block.
    float m = warpMax(score);
    if (lane == 0) sRed[warp] = m;
    __syncthreads();
    m = sRed[0];
    for (int w = 1; w < WARPS; ++w) m = fmaxf(m, sRed[w]);
    __syncthreads();

    const float e = expf(score - m);
    float s = warpSum(e);
    if (lane == 0) sRed[warp] = s;
    __syncthreads();
    s = 0.0f;
    for (int w = 0; w < WARPS; ++w) s += sRed[w];
    sP[j] = e / s;
    __syncthreads();

    // out[q][d] = sum_j P[j] * V[j][d]; the first HEAD_DIM threads each own one d.
    if (j < HEAD_DIM) {
        float acc = 0.0f;
        for (int k = 0; k < SEQ; ++k) acc += sP[k] * V[k * HEAD_DIM + j];
        out[q * HEAD_DIM + j] = acc;
    }
}

int main() {
    const int elems = SEQ * HEAD_DIM;
    float *hQ = new float[elems], *hK = new float[elems], *hV = new float[elems], *hOut = new float[elems];
    for (int t = 0; t < SEQ; ++t)
        for (int d = 0; d < HEAD_DIM; ++d) {
            hQ[t * HEAD_DIM + d] = sinf(0.1f * (t + 1) * (d + 1)) * 0.5f;
            hK[t * HEAD_DIM + d] = cosf(0.07f * (t + 3) * (d + 2)) * 0.5f;
            hV[t * HEAD_DIM + d] = (float)((t * 7 + d * 3) % 11 - 5) / 5.0f;
        }

    float *dQ, *dK, *dV, *dOut;
    CUDA_CHECK(cudaMalloc(&dQ, elems * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dK, elems * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dV, elems * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, elems * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dQ, hQ, elems * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dK, hK, elems * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dV, hV, elems * sizeof(float), cudaMemcpyHostToDevice));

    const float scale = 1.0f / sqrtf((float)HEAD_DIM);
    attentionKernel<<<SEQ, SEQ>>>(dQ, dK, dV, dOut, scale);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hOut, dOut, elems * sizeof(float), cudaMemcpyDeviceToHost));

    // CPU reference in double precision.
    double maxErr = 0.0, checksum = 0.0;
    for (int q = 0; q < SEQ; ++q) {
        double scores[SEQ], mx = -1e30, denom = 0.0;
        for (int j = 0; j < SEQ; ++j) {
            double s = 0.0;
            for (int d = 0; d < HEAD_DIM; ++d) s += (double)hQ[q * HEAD_DIM + d] * hK[j * HEAD_DIM + d];
            scores[j] = s * scale;
            if (scores[j] > mx) mx = scores[j];
        }
        for (int j = 0; j < SEQ; ++j) denom += exp(scores[j] - mx);
        for (int d = 0; d < HEAD_DIM; ++d) {
            double acc = 0.0;
            for (int j = 0; j < SEQ; ++j) acc += exp(scores[j] - mx) / denom * hV[j * HEAD_DIM + d];
            const double err = fabs(acc - hOut[q * HEAD_DIM + d]);
            if (err > maxErr) maxErr = err;
            checksum += hOut[q * HEAD_DIM + d];
        }
    }

    printf("tokens=%d head_dim=%d\n", SEQ, HEAD_DIM);
    printf("out[0][0..3] = %.3f %.3f %.3f %.3f\n", hOut[0], hOut[1], hOut[2], hOut[3]);
    printf("out[63][31] = %.3f\n", hOut[elems - 1]);
    printf("checksum = %.3f\n", checksum);
    printf("max error vs CPU < 1e-4: %s\n", maxErr < 1e-4 ? "PASS" : "FAIL");

    cudaFree(dQ); cudaFree(dK); cudaFree(dV); cudaFree(dOut);
    delete[] hQ; delete[] hK; delete[] hV; delete[] hOut;
    return maxErr < 1e-4 ? 0 : 1;
}
