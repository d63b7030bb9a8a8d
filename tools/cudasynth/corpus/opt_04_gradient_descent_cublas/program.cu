// Gradient descent optimization with 256 parameters (linear least squares,
// 1024 samples), focused on using vendor-tuned BLAS: the residual
// r = X w - y, the gradient g = X^T r / m and the update w -= lr * g are
// cuBLAS calls (Sgemv, Sgemv, Saxpy), and the loss uses Snrm2. Only the
// synthetic data generation is a custom kernel. Build with -lcublas.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err = (call);                                              \
        if (err != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err), \
                    __FILE__, __LINE__);                                       \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

#define CUBLAS_CHECK(call)                                                     \
    do {                                                                       \
        cublasStatus_t st = (call);                                            \
        if (st != CUBLAS_STATUS_SUCCESS) {                                     \
            fprintf(stderr, "cuBLAS error %d at %s:%d\n", (int)st, __FILE__, __LINE__); \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

const int M = 1024;  // samples
const int P = 256;   // parameters
const int ITERS = 300;
const float LR = 0.5f;

// X is column-major (cuBLAS convention): X[i + j*M]. Entries in [-1, 1).
__global__ void makeData(float* X, const float* wTrue, float* y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    float acc = 0.0f;
    for (int j = 0; j < P; ++j) {
        unsigned int h = (unsigned int)(i * P + j) * 0x9E3779B1u + 0x7F4A7C15u;
        h ^= h >> 16;
        h *= 0x85EBCA6Bu;
        h ^= h >> 13;
        h *= 0xC2B2AE35u;
        h ^= h >> 16;
        const float v = (float)(h & 0xffff) / 32768.0f - 1.0f;
        X[i + j * M] = v;
        acc += v * wTrue[j];
    }
    y[i] = acc + 0.01f * (float)((i * 31) % 7 - 3);  // small label noise
}

int main() {
    std::vector<float> wTrue(P);
    for (int j = 0; j < P; ++j) wTrue[j] = (float)((j * 13) % 21 - 10) / 10.0f;

    float *dX, *dY, *dW, *dWTrue, *dR, *dG;
    CUDA_CHECK(cudaMalloc(&dX, (size_t)M * P * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dY, M * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dW, P * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dWTrue, P * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dR, M * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dG, P * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dWTrue, wTrue.data(), P * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dW, 0, P * sizeof(float)));
    makeData<<<(M + 255) / 256, 256>>>(dX, dWTrue, dY);
    CUDA_CHECK(cudaGetLastError());

    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    const float one = 1.0f, minusOne = -1.0f, zero = 0.0f, gradScale = 1.0f / M, step = -LR;

    for (int it = 0; it <= ITERS; ++it) {
        // r = X w - y
        CUDA_CHECK(cudaMemcpy(dR, dY, M * sizeof(float), cudaMemcpyDeviceToDevice));
        CUBLAS_CHECK(cublasSgemv(handle, CUBLAS_OP_N, M, P, &one, dX, M, dW, 1, &minusOne, dR, 1));
        if (it % 50 == 0) {
            float norm = 0.0f;
            CUBLAS_CHECK(cublasSnrm2(handle, M, dR, 1, &norm));
            printf("iteration %3d: loss=%.5f\n", it, 0.5 * norm * norm / M);
        }
        if (it == ITERS) break;
        // g = X^T r / M ; w = w - lr * g
        CUBLAS_CHECK(cublasSgemv(handle, CUBLAS_OP_T, M, P, &gradScale, dX, M, dR, 1, &zero, dG, 1));
        CUBLAS_CHECK(cublasSaxpy(handle, P, &step, dG, 1, dW, 1));
    }

    std::vector<float> w(P);
    CUDA_CHECK(cudaMemcpy(w.data(), dW, P * sizeof(float), cudaMemcpyDeviceToHost));
    double err = 0.0, ref = 0.0;
    for (int j = 0; j < P; ++j) {
        err += (w[j] - wTrue[j]) * (double)(w[j] - wTrue[j]);
        ref += wTrue[j] * (double)wTrue[j];
    }
    printf("w[0]=%.3f (true %.3f) w[255]=%.3f (true %.3f)\n", w[0], wTrue[0], w[P - 1], wTrue[P - 1]);
    printf("relative parameter error=%.3f\n", sqrt(err / ref));

    CUBLAS_CHECK(cublasDestroy(handle));
    cudaFree(dX); cudaFree(dY); cudaFree(dW); cudaFree(dWTrue); cudaFree(dR); cudaFree(dG);
    return 0;
}
