// Sparse tensor operations on a 64x64x64 tensor with 20000 non-zero elements
// in COO format, focused on simple memory management with unified memory:
// every buffer is allocated with cudaMallocManaged and touched directly from
// host and device. Two operations:
//   1. tensor-times-vector along mode 3: Y[i][j] = sum_k X[i][j][k] * v[k],
//      scattered with float atomicAdd (values are multiples of 1/4 and 1/8,
//      so the sums are exact and order independent);
//   2. the squared Frobenius norm, reduced with __shfl_xor_sync inside warps
//      and atomicAdd across warps.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t err_ = (call);                                            \
        if (err_ != cudaSuccess) {                                            \
            fprintf(stderr, "CUDA error: %s (%s:%d)\n",                       \
                    cudaGetErrorString(err_), __FILE__, __LINE__);            \
            exit(EXIT_FAILURE);                                               \
        }                                                                     \
    } while (0)

#define DIM_I 64
#define DIM_J 64
#define DIM_K 64
#define NNZ 20000

struct CooEntry {
    unsigned short i, j, k;
    float val;
};

__global__ void ttvMode3(const CooEntry* __restrict__ X, int nnz, const float* __restrict__ v, float* Y) {
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < nnz; t += blockDim.x * gridDim.x) {
        const CooEntry e = X[t];
        atomicAdd(&Y[e.i * DIM_J + e.j], e.val * v[e.k]);
    }
}

__global__ void frobeniusSq(const CooEntry* __restrict__ X, int nnz, float* result) {
    float sum = 0.0f;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < nnz; t += blockDim.x * gridDim.x)
        sum += X[t].val * X[t].val;
    for (int mask = 16; mask >= 1; mask >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, mask);
    if ((threadIdx.x & 31) == 0) atomicAdd(result, sum);
}

int main() {
    CooEntry* X;
    float *v, *Y, *norm;
    CUDA_CHECK(cudaMallocManaged(&X, NNZ * sizeof(CooEntry)));
    CUDA_CHECK(cudaMallocManaged(&v, DIM_K * sizeof(float)));
    CUDA_CHECK(cudaMallocManaged(&Y, DIM_I * DIM_J * sizeof(float)));
    CUDA_CHECK(cudaMallocManaged(&norm, sizeof(float)));

    // Distinct coordinates: entry t maps to the linear index (t * 97) mod 64^3 (97 is odd).
    for (int t = 0; t < NNZ; ++t) {
        const unsigned int lin = (unsigned int)(t * 97u) % (DIM_I * DIM_J * DIM_K);
        X[t].i = (unsigned short)(lin / (DIM_J * DIM_K));
        X[t].j = (unsigned short)((lin / DIM_K) % DIM_J);
        X[t].k = (unsigned short)(lin % DIM_K);
        X[t].val = (float)((t * 13) % 17 - 8) / 4.0f;
    }
    for (int k = 0; k < DIM_K; ++k) v[k] = (float)(k % 9 - 4) / 8.0f;
    for (int p = 0; p < DIM_I * DIM_J; ++p) Y[p] = 0.0f;
    *norm = 0.0f;

    ttvMode3<<<32, 256>>>(X, NNZ, v, Y);
    CUDA_CHECK(cudaGetLastError());
    frobeniusSq<<<16, 256>>>(X, NNZ, norm);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());  // required before the host reads managed memory

    // Host reference.
    static float ref[DIM_I * DIM_J];
    double refNorm = 0.0;
    for (int t = 0; t < NNZ; ++t) {
        ref[X[t].i * DIM_J + X[t].j] += X[t].val * v[X[t].k];
        refNorm += (double)X[t].val * X[t].val;
    }
    int mismatches = 0, nonzero = 0;
    double checksum = 0.0;
    for (int p = 0; p < DIM_I * DIM_J; ++p) {
        if (ref[p] != Y[p]) ++mismatches;
        if (Y[p] != 0.0f) ++nonzero;
        checksum += Y[p] * (double)(p % 11 + 1);
    }

    printf("tensor %dx%dx%d, nnz=%d\n", DIM_I, DIM_J, DIM_K, NNZ);
    printf("TTV mode 3: nonzero outputs=%d weighted checksum=%.4f\n", nonzero, checksum);
    printf("Y[0][0]=%.4f Y[10][20]=%.4f Y[63][63]=%.4f\n", Y[0], Y[10 * DIM_J + 20], Y[DIM_I * DIM_J - 1]);
    printf("||X||_F^2=%.4f (host %.4f)\n", *norm, refNorm);
    printf("TTV matches host: %s\n", mismatches == 0 ? "yes" : "no");
    const bool ok = mismatches == 0 && (double)*norm == refNorm;

    CUDA_CHECK(cudaFree(X));
    CUDA_CHECK(cudaFree(v));
    CUDA_CHECK(cudaFree(Y));
    CUDA_CHECK(cudaFree(norm));
    return ok ? 0 : 1;
}
