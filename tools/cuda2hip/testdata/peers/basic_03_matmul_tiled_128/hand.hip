// Tiled SGEMM C = A * B (128 x 128), HIP port.
//
// Portability notes: the kernel is launched with <<< >>> (hipcc and nvcc both
// accept it); the block is 16 x 16 = 256 threads, which is 8 wave32 waves on
// RDNA, 4 wave64 waves on CDNA and 8 warps on NVIDIA, so no lane-count
// assumption is made anywhere.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define HIP_CHECK(call)                                                        \
    do {                                                                       \
        hipError_t err = call;                                                 \
        if (err != hipSuccess) {                                               \
            fprintf(stderr, "%s failed: %s\n", #call, hipGetErrorString(err)); \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

#define N 128
#define TILE_DIM 16

__global__ void __launch_bounds__(TILE_DIM * TILE_DIM)
matmulTiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    __shared__ float sa[TILE_DIM][TILE_DIM];
    __shared__ float sb[TILE_DIM][TILE_DIM + 1];  // +1: no LDS bank conflicts on the column reads

    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const unsigned r = blockIdx.y * TILE_DIM + ty;
    const unsigned col = blockIdx.x * TILE_DIM + tx;
    const unsigned un = static_cast<unsigned>(n);
    float sum = 0.f;

    for (unsigned k0 = 0; k0 < un; k0 += TILE_DIM) {
        sa[ty][tx] = (r < un && k0 + tx < un) ? a[r * un + k0 + tx] : 0.f;
        sb[ty][tx] = (k0 + ty < un && col < un) ? b[(k0 + ty) * un + col] : 0.f;
        __syncthreads();
        for (int k = 0; k < TILE_DIM; ++k) {
            sum += sa[ty][k] * sb[k][tx];
        }
        __syncthreads();
    }
    if (r < un && col < un) {
        c[r * un + col] = sum;
    }
}

int main() {
    const size_t count = static_cast<size_t>(N) * N;
    std::vector<float> hA(count), hB(count), hC(count);
    for (int i = 0; i < N; ++i) {
        for (int j = 0; j < N; ++j) {
            hA[i * N + j] = static_cast<float>((i * 3 + j * 5) % 17 - 8) / 8.0f;
            hB[i * N + j] = static_cast<float>((i * 7 + j * 2) % 13 - 6) / 8.0f;
        }
    }

    float *dA = nullptr, *dB = nullptr, *dC = nullptr;
    HIP_CHECK(hipMalloc(&dA, count * sizeof(float)));
    HIP_CHECK(hipMalloc(&dB, count * sizeof(float)));
    HIP_CHECK(hipMalloc(&dC, count * sizeof(float)));
    HIP_CHECK(hipMemcpy(dA, hA.data(), count * sizeof(float), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dB, hB.data(), count * sizeof(float), hipMemcpyHostToDevice));

    hipEvent_t t0, t1;
    HIP_CHECK(hipEventCreate(&t0));
    HIP_CHECK(hipEventCreate(&t1));

    const dim3 threads(TILE_DIM, TILE_DIM);
    const dim3 blocks((N + TILE_DIM - 1) / TILE_DIM, (N + TILE_DIM - 1) / TILE_DIM);
    HIP_CHECK(hipEventRecord(t0));
    matmulTiled<<<blocks, threads, 0, 0>>>(dA, dB, dC, N);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipEventRecord(t1));
    HIP_CHECK(hipEventSynchronize(t1));
    float ms = 0.f;
    HIP_CHECK(hipEventElapsedTime(&ms, t0, t1));
    fprintf(stderr, "matmul kernel: %.3f ms\n", ms);

    HIP_CHECK(hipMemcpy(hC.data(), dC, count * sizeof(float), hipMemcpyDeviceToHost));

    int errors = 0;
    double trace = 0.0, checksum = 0.0;
    for (int i = 0; i < N; ++i) {
        for (int j = 0; j < N; ++j) {
            float ref = 0.0f;
            for (int k = 0; k < N; ++k) ref += hA[i * N + k] * hB[k * N + j];
            if (ref != hC[i * N + j]) ++errors;
            checksum += hC[i * N + j];
        }
        trace += hC[i * N + i];
    }

    printf("C[0][0]=%.4f C[5][77]=%.4f C[127][127]=%.4f\n", hC[0], hC[5 * N + 77], hC[N * N - 1]);
    printf("trace=%.4f checksum=%.4f\n", trace, checksum);
    printf("verification: %s (%d mismatches)\n", errors == 0 ? "PASS" : "FAIL", errors);

    HIP_CHECK(hipEventDestroy(t0));
    HIP_CHECK(hipEventDestroy(t1));
    HIP_CHECK(hipFree(dA));
    HIP_CHECK(hipFree(dB));
    HIP_CHECK(hipFree(dC));
    return errors == 0 ? 0 : 1;
}
