// Sparse matrix-matrix multiplication C = A * B with A (512 x 512) in ELL
// format and B dense (512 x 32), focused on coalesced access: the ELL arrays
// are stored column-major (slot k of all rows is contiguous), B and C are
// row-major, and a 2D grid maps threadIdx.x to the column of B/C so a warp
// reads consecutive elements of a B row. The kernel is templated on the ELL
// width so the slot loop is fully unrolled.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t status = (call);                                             \
        if (status != cudaSuccess) {                                             \
            fprintf(stderr, "CUDA error: %s at line %d\n", cudaGetErrorString(status), __LINE__); \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

const int M = 512;      // rows of A and C
const int K = 512;      // cols of A, rows of B
const int NCOLS = 32;   // cols of B and C
const int ELL_WIDTH = 8;

template <int WIDTH>
__global__ void spmmEll(const int* __restrict__ ellCols, const float* __restrict__ ellVals,
                        const float* __restrict__ B, float* __restrict__ C, int m, int ncols) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= m || col >= ncols) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < WIDTH; ++k) {
        const int a = ellCols[k * m + row];  // column-major ELL
        if (a >= 0) acc += ellVals[k * m + row] * B[a * ncols + col];
    }
    C[row * ncols + col] = acc;
}

int main() {
    std::vector<int> ellCols(ELL_WIDTH * M, -1);
    std::vector<float> ellVals(ELL_WIDTH * M, 0.0f);
    int nnz = 0;
    for (int r = 0; r < M; ++r) {
        const int count = 1 + (r * 5) % ELL_WIDTH;  // 1..8 entries, the rest is padding
        for (int k = 0; k < count; ++k) {
            ellCols[k * M + r] = (r * 37 + k * 61 + 5) % K;  // distinct since 61*k differs mod 512 for k<8
            ellVals[k * M + r] = (float)((r + k * 3) % 9 - 4) / 4.0f;
            ++nnz;
        }
    }
    std::vector<float> B(K * NCOLS), C(M * NCOLS);
    for (int i = 0; i < K; ++i)
        for (int j = 0; j < NCOLS; ++j) B[i * NCOLS + j] = (float)((i * 3 + j * 7) % 13 - 6) / 2.0f;

    int* dCols;
    float *dVals, *dB, *dC;
    CHECK(cudaMalloc(&dCols, ellCols.size() * sizeof(int)));
    CHECK(cudaMalloc(&dVals, ellVals.size() * sizeof(float)));
    CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
    CHECK(cudaMalloc(&dC, C.size() * sizeof(float)));
    CHECK(cudaMemcpy(dCols, ellCols.data(), ellCols.size() * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dVals, ellVals.data(), ellVals.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(32, 8);
    dim3 grid((NCOLS + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    spmmEll<ELL_WIDTH><<<grid, block>>>(dCols, dVals, dB, dC, M, NCOLS);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));

    int mismatches = 0;
    double checksum = 0.0;
    for (int r = 0; r < M; ++r)
        for (int j = 0; j < NCOLS; ++j) {
            float ref = 0.0f;
            for (int k = 0; k < ELL_WIDTH; ++k) {
                const int a = ellCols[k * M + r];
                if (a >= 0) ref += ellVals[k * M + r] * B[a * NCOLS + j];
            }
            if (ref != C[r * NCOLS + j]) ++mismatches;
            checksum += C[r * NCOLS + j] * (double)((r + j) % 3 + 1);
        }

    printf("A: %dx%d ELL width %d, nnz=%d (%.1f%% padding)\n", M, K, ELL_WIDTH, nnz,
           100.0 * (ELL_WIDTH * M - nnz) / (ELL_WIDTH * M));
    printf("C[0][0]=%.3f C[100][5]=%.3f C[511][31]=%.3f\n", C[0], C[100 * NCOLS + 5], C[M * NCOLS - 1]);
    printf("weighted checksum=%.3f\n", checksum);
    printf("mismatches=%d\n", mismatches);

    cudaFree(dCols); cudaFree(dVals); cudaFree(dB); cudaFree(dC);
    return mismatches == 0 ? 0 : 1;
}
