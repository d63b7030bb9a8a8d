// 64x64 matrix factorization using LU decomposition (Doolittle, no pivoting:
// the test matrix is diagonally dominant), optimized for generic precision:
// the kernels are templates instantiated for float and double. Step k runs
// two kernels: one scales column k below the diagonal into L, the other
// applies the rank-1 update to the trailing submatrix on a 2D grid. L and U
// overwrite A in place (unit diagonal of L implied).
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e = (call);                                               \
        if (e != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error: %s (%s:%d)\n", cudaGetErrorString(e), \
                    __FILE__, __LINE__);                                      \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

constexpr int N = 64;

template <typename T>
__global__ void scaleColumn(T* A, int n, int k) {
    const int i = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) A[i * n + k] /= A[k * n + k];
}

template <typename T>
__global__ void updateTrailing(T* A, int n, int k) {
    const int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
    const int i = k + 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) A[i * n + j] -= A[i * n + k] * A[k * n + j];
}

template <typename T>
static std::vector<T> luFactorize(const std::vector<double>& A0) {
    std::vector<T> A(A0.begin(), A0.end());
    T* dA;
    CUDA_CHECK(cudaMalloc(&dA, N * N * sizeof(T)));
    CUDA_CHECK(cudaMemcpy(dA, A.data(), N * N * sizeof(T), cudaMemcpyHostToDevice));
    const dim3 block(16, 16);
    for (int k = 0; k < N - 1; ++k) {
        const int rem = N - k - 1;
        scaleColumn<T><<<(rem + 63) / 64, 64>>>(dA, N, k);
        updateTrailing<T><<<dim3((rem + 15) / 16, (rem + 15) / 16), block>>>(dA, N, k);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(A.data(), dA, N * N * sizeof(T), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dA));
    return A;
}

// max |(L*U - A0)_ij| and log|det A| from the packed factors.
template <typename T>
static void analyze(const std::vector<T>& LU, const std::vector<double>& A0, double* maxErr, double* logDet) {
    *maxErr = 0.0;
    *logDet = 0.0;
    for (int i = 0; i < N; ++i) {
        *logDet += log(fabs((double)LU[i * N + i]));
        for (int j = 0; j < N; ++j) {
            double s = 0.0;
            for (int k = 0; k <= (i < j ? i : j); ++k) {
                const double l = (k == i) ? 1.0 : (double)LU[i * N + k];
                s += l * (double)LU[k * N + j];
            }
            const double err = fabs(s - A0[i * N + j]);
            if (err > *maxErr) *maxErr = err;
        }
    }
}

int main() {
    std::vector<double> A0(N * N);
    for (int i = 0; i < N; ++i) {
        double rowSum = 0.0;
        for (int j = 0; j < N; ++j) {
            if (i == j) continue;
            A0[i * N + j] = (double)((i * 17 + j * 31) % 19 - 9) / 10.0;
            rowSum += fabs(A0[i * N + j]);
        }
        A0[i * N + i] = rowSum + 1.0 + (i % 4);
    }

    const std::vector<double> luD = luFactorize<double>(A0);
    const std::vector<float> luF = luFactorize<float>(A0);
    double errD, logDetD, errF, logDetF;
    analyze(luD, A0, &errD, &logDetD);
    analyze(luF, A0, &errF, &logDetF);

    // Solve A x = b with b = A * ones using the double factors: x should be all ones.
    std::vector<double> b(N, 0.0), x(N);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) b[i] += A0[i * N + j];
    for (int i = 0; i < N; ++i) {  // forward: L y = b
        double s = b[i];
        for (int k = 0; k < i; ++k) s -= luD[i * N + k] * x[k];
        x[i] = s;
    }
    for (int i = N - 1; i >= 0; --i) {  // backward: U x = y
        double s = x[i];
        for (int k = i + 1; k < N; ++k) s -= luD[i * N + k] * x[k];
        x[i] = s / luD[i * N + i];
    }
    double solErr = 0.0;
    for (int i = 0; i < N; ++i) solErr = fmax(solErr, fabs(x[i] - 1.0));

    printf("matrix %dx%d, diagonally dominant\n", N, N);
    printf("double: U[0][0]=%.6f U[63][63]=%.6f L[63][0]=%.6f log|det|=%.6f\n", luD[0], luD[N * N - 1],
           luD[(N - 1) * N], logDetD);
    printf("float:  U[63][63]=%.3f log|det|=%.3f\n", luF[N * N - 1], logDetF);
    printf("reconstruction error double < 1e-10: %s, float < 1e-3: %s\n", errD < 1e-10 ? "yes" : "no",
           errF < 1e-3 ? "yes" : "no");
    printf("solve with all-ones solution, max error < 1e-10: %s\n", solErr < 1e-10 ? "yes" : "no");
    return (errD < 1e-10 && errF < 1e-3 && solErr < 1e-10) ? 0 : 1;
}
