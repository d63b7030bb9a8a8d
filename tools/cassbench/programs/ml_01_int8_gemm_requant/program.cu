// Quantized fully connected layer as used in int8 inference: a batch of four
// 64x256 int8 activation matrices times one 256x64 int8 weight matrix,
// int32 accumulation, per-channel int32 bias, fixed-point requantization
// (multiplier and rounding right shift per output channel, both in constant
// memory), saturation to int8 and ReLU. blockIdx.z selects the batch entry;
// 16x16 tiles of both operands are staged in shared memory as signed chars.
// Everything is integer arithmetic, so the GPU must match the CPU exactly.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                  \
    do {                                                                                  \
        cudaError_t err = call;                                                           \
        if (err != cudaSuccess) {                                                         \
            fprintf(stderr, "CUDA error in %s at line %d: %s\n", __FILE__, __LINE__,      \
                    cudaGetErrorString(err));                                             \
            exit(EXIT_FAILURE);                                                           \
        }                                                                                 \
    } while (0)

const int BATCH = 4, M = 64, K = 256, N = 64;
const int TILE = 16;

__constant__ int32_t c_multiplier[N];
__constant__ int c_shift[N];

__device__ __host__ inline int8_t requantize(int32_t acc, int32_t mult, int shift) {
    const int64_t scaled = ((int64_t)acc * mult + ((int64_t)1 << (shift - 1))) >> shift;
    const int64_t clamped = scaled < -128 ? -128 : (scaled > 127 ? 127 : scaled);
    return (int8_t)(clamped < 0 ? 0 : clamped);  // ReLU after saturation
}

__global__ void gemmInt8(const int8_t* act, const int8_t* weight, const int32_t* bias, int8_t* out) {
    __shared__ int8_t aTile[TILE][TILE];
    __shared__ int8_t wTile[TILE][TILE];
    const int b = blockIdx.z;
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    const int8_t* a = act + (size_t)b * M * K;
    int32_t acc = 0;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        aTile[threadIdx.y][threadIdx.x] = a[row * K + k0 + threadIdx.x];
        wTile[threadIdx.y][threadIdx.x] = weight[(k0 + threadIdx.y) * N + col];
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += (int32_t)aTile[threadIdx.y][kk] * (int32_t)wTile[kk][threadIdx.x];
        __syncthreads();
    }
    out[((size_t)b * M + row) * N + col] = requantize(acc + bias[col], c_multiplier[col], c_shift[col]);
}

int main() {
    std::vector<int8_t> act((size_t)BATCH * M * K), weight((size_t)K * N), out((size_t)BATCH * M * N);
    std::vector<int32_t> bias(N), mult(N);
    std::vector<int> shift(N);
    uint32_t s = 0xC0FFEEu;
    auto rnd = [&s]() {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        return s;
    };
    for (auto& v : act) v = (int8_t)((int)(rnd() % 255) - 127);
    for (auto& v : weight) v = (int8_t)((int)(rnd() % 129) - 64);
    for (int n = 0; n < N; ++n) {
        bias[n] = (int32_t)(rnd() % 20001) - 10000;
        mult[n] = 1073741824 + (int32_t)(rnd() % 1073741824u);  // [2^30, 2^31)
        shift[n] = 40 + n % 4;
    }
    CUDA_CHECK(cudaMemcpyToSymbol(c_multiplier, mult.data(), N * sizeof(int32_t)));
    CUDA_CHECK(cudaMemcpyToSymbol(c_shift, shift.data(), N * sizeof(int)));

    int8_t *dAct, *dW, *dOut;
    int32_t* dBias;
    CUDA_CHECK(cudaMalloc(&dAct, act.size()));
    CUDA_CHECK(cudaMalloc(&dW, weight.size()));
    CUDA_CHECK(cudaMalloc(&dOut, out.size()));
    CUDA_CHECK(cudaMalloc(&dBias, N * sizeof(int32_t)));
    CUDA_CHECK(cudaMemcpy(dAct, act.data(), act.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dW, weight.data(), weight.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dBias, bias.data(), N * sizeof(int32_t), cudaMemcpyHostToDevice));
    const dim3 block(TILE, TILE), grid(N / TILE, M / TILE, BATCH);
    gemmInt8<<<grid, block>>>(dAct, dW, dBias, dOut);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), dOut, out.size(), cudaMemcpyDeviceToHost));

    int mismatches = 0;
    uint32_t checksum = 2166136261u;  // FNV-1a over the output bytes
    printf("batch=%d M=%d K=%d N=%d\n", BATCH, M, K, N);
    for (int b = 0; b < BATCH; ++b) {
        long long sum = 0;
        int zeros = 0, saturated = 0;
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
                int32_t acc = bias[n];
                for (int k = 0; k < K; ++k)
                    acc += (int32_t)act[((size_t)b * M + m) * K + k] * (int32_t)weight[(size_t)k * N + n];
                const int8_t ref = requantize(acc, mult[n], shift[n]);
                const int8_t got = out[((size_t)b * M + m) * N + n];
                if (got != ref) ++mismatches;
                sum += got;
                zeros += got == 0;
                saturated += got == 127;
                checksum = (checksum ^ (uint8_t)got) * 16777619u;
            }
        printf("batch %d: sum=%lld zeros=%d saturated=%d\n", b, sum, zeros, saturated);
    }
    printf("out[0][0][0..7]:");
    for (int n = 0; n < 8; ++n) printf(" %d", out[n]);
    printf("\nfnv1a=%08x mismatches=%d\n", checksum, mismatches);
    CUDA_CHECK(cudaFree(dAct)); CUDA_CHECK(cudaFree(dW)); CUDA_CHECK(cudaFree(dOut)); CUDA_CHECK(cudaFree(dBias));
    return mismatches == 0 ? 0 : 1;
}
