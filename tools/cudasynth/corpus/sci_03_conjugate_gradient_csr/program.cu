// Conjugate gradient solver for a 1024x1024 sparse linear system (the
// 5-point Laplacian of a 32x32 grid) stored in CSR, focused on reproducible
// reductions: dot products use a two-pass block reduction (a templated
// shared-memory tree per block, then a single block over the partials), so
// every run sums in the same order. All vectors stay on the device; only
// scalars travel to the host.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t status_ = (call);                                         \
        if (status_ != cudaSuccess) {                                         \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                       \
                    cudaGetErrorString(status_), __FILE__, __LINE__);         \
            exit(EXIT_FAILURE);                                               \
        }                                                                     \
    } while (0)

constexpr int GRID = 32;
constexpr int N = GRID * GRID;
constexpr int BLOCK = 256;
constexpr int NUM_BLOCKS = (N + BLOCK - 1) / BLOCK;

__global__ void spmvCsr(const int* rowPtr, const int* colIdx, const double* val, const double* x, double* y, int n) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n) {
        double acc = 0.0;
        for (int k = rowPtr[row]; k < rowPtr[row + 1]; ++k) acc += val[k] * x[colIdx[k]];
        y[row] = acc;
    }
}

template <int BLOCK_SIZE>
__device__ double blockReduce(double v) {
    __shared__ double buf[BLOCK_SIZE];
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    return buf[0];
}

template <int BLOCK_SIZE>
__global__ void dotPartial(const double* a, const double* b, double* partial, int n) {
    const int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    const double v = (i < n) ? a[i] * b[i] : 0.0;
    const double s = blockReduce<BLOCK_SIZE>(v);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

template <int BLOCK_SIZE>
__global__ void dotFinal(const double* partial, int count, double* result) {
    double v = 0.0;
    for (int i = threadIdx.x; i < count; i += BLOCK_SIZE) v += partial[i];
    const double s = blockReduce<BLOCK_SIZE>(v);
    if (threadIdx.x == 0) *result = s;
}

// y = y + alpha * x
__global__ void axpy(double alpha, const double* x, double* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += alpha * x[i];
}

// p = r + beta * p
__global__ void updateDirection(double beta, const double* r, double* p, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = r[i] + beta * p[i];
}

static double dot(const double* a, const double* b, double* dPartial, double* dResult) {
    dotPartial<BLOCK><<<NUM_BLOCKS, BLOCK>>>(a, b, dPartial, N);
    dotFinal<BLOCK><<<1, BLOCK>>>(dPartial, NUM_BLOCKS, dResult);
    CUDA_CHECK(cudaGetLastError());
    double h = 0.0;
    CUDA_CHECK(cudaMemcpy(&h, dResult, sizeof(double), cudaMemcpyDeviceToHost));
    return h;
}

int main() {
    // Assemble the 2D Poisson matrix (Dirichlet boundaries) in CSR.
    std::vector<int> rowPtr(N + 1, 0), colIdx;
    std::vector<double> val;
    for (int j = 0; j < GRID; ++j)
        for (int i = 0; i < GRID; ++i) {
            const int row = j * GRID + i;
            if (j > 0) { colIdx.push_back(row - GRID); val.push_back(-1.0); }
            if (i > 0) { colIdx.push_back(row - 1); val.push_back(-1.0); }
            colIdx.push_back(row); val.push_back(4.0);
            if (i < GRID - 1) { colIdx.push_back(row + 1); val.push_back(-1.0); }
            if (j < GRID - 1) { colIdx.push_back(row + GRID); val.push_back(-1.0); }
            rowPtr[row + 1] = (int)colIdx.size();
        }
    const int nnz = (int)colIdx.size();
    std::vector<double> b(N, 1.0 / ((GRID + 1) * (GRID + 1)));

    int *dRow, *dCol;
    double *dVal, *dX, *dR, *dP, *dAp, *dPartial, *dResult;
    CUDA_CHECK(cudaMalloc(&dRow, (N + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dCol, nnz * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dVal, nnz * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dX, N * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dR, N * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dP, N * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dAp, N * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dPartial, NUM_BLOCKS * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dResult, sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dRow, rowPtr.data(), (N + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dCol, colIdx.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dVal, val.data(), nnz * sizeof(double), cudaMemcpyHostToDevice));

    // x0 = 0, r0 = b, p0 = r0
    CUDA_CHECK(cudaMemset(dX, 0, N * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dR, b.data(), N * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dP, b.data(), N * sizeof(double), cudaMemcpyHostToDevice));

    const double tol = 1e-10;
    double rr = dot(dR, dR, dPartial, dResult);
    const double rr0 = rr;
    int iter = 0;
    while (iter < 1000 && sqrt(rr / rr0) > tol) {
        spmvCsr<<<NUM_BLOCKS, BLOCK>>>(dRow, dCol, dVal, dP, dAp, N);
        const double pAp = dot(dP, dAp, dPartial, dResult);
        const double alpha = rr / pAp;
        axpy<<<NUM_BLOCKS, BLOCK>>>(alpha, dP, dX, N);
        axpy<<<NUM_BLOCKS, BLOCK>>>(-alpha, dAp, dR, N);
        const double rrNew = dot(dR, dR, dPartial, dResult);
        updateDirection<<<NUM_BLOCKS, BLOCK>>>(rrNew / rr, dR, dP, N);
        CUDA_CHECK(cudaGetLastError());
        rr = rrNew;
        ++iter;
    }

    std::vector<double> x(N);
    CUDA_CHECK(cudaMemcpy(x.data(), dX, N * sizeof(double), cudaMemcpyDeviceToHost));

    // Independent check of the true residual ||b - A x|| on the host.
    double res = 0.0, bnorm = 0.0;
    for (int row = 0; row < N; ++row) {
        double ax = 0.0;
        for (int k = rowPtr[row]; k < rowPtr[row + 1]; ++k) ax += val[k] * x[colIdx[k]];
        res += (b[row] - ax) * (b[row] - ax);
        bnorm += b[row] * b[row];
    }
    const double relRes = sqrt(res / bnorm);

    printf("unknowns=%d nnz=%d\n", N, nnz);
    printf("converged in %d iterations\n", iter);
    printf("x[0]=%.6f x[528]=%.6f x[1023]=%.6f\n", x[0], x[16 * GRID + 16], x[N - 1]);
    printf("relative residual < 1e-8: %s\n", relRes < 1e-8 ? "yes" : "no");

    cudaFree(dRow); cudaFree(dCol); cudaFree(dVal); cudaFree(dX); cudaFree(dR);
    cudaFree(dP); cudaFree(dAp); cudaFree(dPartial); cudaFree(dResult);
    return relRes < 1e-8 ? 0 : 1;
}
