// Sparse matrix-vector multiplication y = A x where A (2048 x 2048) has
// about 32000 non-zero elements in CSR format, optimized for memory
// coalescing: the "vector" CSR kernel assigns one warp per row, so the 32
// lanes read consecutive column indices and values, and the partial sums are
// combined with __shfl_down_sync.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t e_ = (call);                                                \
        if (e_ != cudaSuccess) {                                                \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), \
                    __FILE__, __LINE__);                                        \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

constexpr int ROWS = 2048;
constexpr int COLS = 2048;
constexpr int WARPS_PER_BLOCK = 8;

__global__ void spmvCsrVector(const int* __restrict__ rowPtr, const int* __restrict__ colIdx,
                              const float* __restrict__ val, const float* __restrict__ x,
                              float* __restrict__ y, int rows) {
    const int warpId = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (warpId >= rows) return;  // whole warp exits together

    float sum = 0.0f;
    for (int k = rowPtr[warpId] + lane; k < rowPtr[warpId + 1]; k += 32) sum += val[k] * x[colIdx[k]];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
    if (lane == 0) y[warpId] = sum;
}

int main() {
    // Row r has 4 + (r*7 % 25) entries at pseudo-random distinct columns.
    std::vector<int> rowPtr(ROWS + 1, 0), colIdx;
    std::vector<float> val;
    for (int r = 0; r < ROWS; ++r) {
        const int count = 4 + (r * 7) % 25;
        int c = (r * 131) % COLS;
        for (int k = 0; k < count; ++k) {
            c = (c + 1 + (r + k * 17) % 61) % COLS;  // 28 strides of <= 62 never wrap onto an earlier column
            colIdx.push_back(c);
            val.push_back((float)((r + 3 * k) % 15 - 7) / 8.0f);
        }
        rowPtr[r + 1] = (int)colIdx.size();
    }
    const int nnz = (int)colIdx.size();
    std::vector<float> x(COLS), y(ROWS);
    for (int c = 0; c < COLS; ++c) x[c] = (float)(c % 33 - 16) / 16.0f;

    int *dRow, *dCol;
    float *dVal, *dX, *dY;
    CUDA_CHECK(cudaMalloc(&dRow, (ROWS + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dCol, nnz * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dVal, nnz * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dX, COLS * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dY, ROWS * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dRow, rowPtr.data(), (ROWS + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dCol, colIdx.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dVal, val.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dX, x.data(), COLS * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = WARPS_PER_BLOCK * 32;
    const int blocks = (ROWS + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    spmvCsrVector<<<blocks, threads>>>(dRow, dCol, dVal, dX, dY, ROWS);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dY, ROWS * sizeof(float), cudaMemcpyDeviceToHost));

    // Values are multiples of 1/8 and 1/16: every sum is exact, so compare exactly.
    int mismatches = 0;
    double checksum = 0.0;
    for (int r = 0; r < ROWS; ++r) {
        float ref = 0.0f;
        for (int k = rowPtr[r]; k < rowPtr[r + 1]; ++k) ref += val[k] * x[colIdx[k]];
        if (ref != y[r]) ++mismatches;
        checksum += y[r];
    }
    printf("rows=%d cols=%d nnz=%d\n", ROWS, COLS, nnz);
    printf("y[0]=%.5f y[1]=%.5f y[1000]=%.5f y[2047]=%.5f\n", y[0], y[1], y[1000], y[ROWS - 1]);
    printf("checksum=%.5f mismatches=%d\n", checksum, mismatches);

    cudaFree(dRow); cudaFree(dCol); cudaFree(dVal); cudaFree(dX); cudaFree(dY);
    return mismatches == 0 ? 0 : 1;
}
