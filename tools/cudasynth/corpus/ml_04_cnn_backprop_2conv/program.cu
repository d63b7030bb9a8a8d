// Backpropagation through a convolutional neural network with 2 conv layers
// (1 -> 4 -> 2 channels, 3x3 kernels, ReLU after the first layer, L2 loss),
// optimized for parallel gradient reduction: every weight gradient is
// computed by one thread block that sums the per-pixel products with a
// shared-memory tree reduction (__syncthreads between levels). Activations
// and input gradients use 3D grids (x, y, channel). The analytic gradient is
// checked against a finite-difference estimate on the host.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err = (call);                                              \
        if (err != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at line %d\n", cudaGetErrorString(err), __LINE__); \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

#define H0 32
#define C1 4
#define H1 (H0 - 2)
#define C2 2
#define H2 (H1 - 2)
#define KS 3
#define RED_THREADS 256

// Valid 3x3 convolution (cross-correlation): out[co][y][x] = sum in[ci][y+ky][x+kx] * w[co][ci][ky][kx]
__global__ void convForward(const float* in, const float* w, float* out, int cin, int hin, int hout, bool relu) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int co = blockIdx.z;
    if (x >= hout || y >= hout) return;
    float acc = 0.0f;
    for (int ci = 0; ci < cin; ++ci)
        for (int ky = 0; ky < KS; ++ky)
            for (int kx = 0; kx < KS; ++kx)
                acc += in[(ci * hin + y + ky) * hin + x + kx] * w[((co * cin + ci) * KS + ky) * KS + kx];
    out[(co * hout + y) * hout + x] = relu ? fmaxf(acc, 0.0f) : acc;
}

// dIn[ci][y][x] = sum_co sum_k dOut[co][y-ky][x-kx] * w[co][ci][ky][kx], masked by ReLU'(act)
__global__ void convBackwardData(const float* dOut, const float* w, const float* act, float* dIn, int cin, int cout,
                                 int hin, int hout) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int ci = blockIdx.z;
    if (x >= hin || y >= hin) return;
    float acc = 0.0f;
    for (int co = 0; co < cout; ++co)
        for (int ky = 0; ky < KS; ++ky)
            for (int kx = 0; kx < KS; ++kx) {
                const int oy = y - ky, ox = x - kx;
                if (oy >= 0 && oy < hout && ox >= 0 && ox < hout)
                    acc += dOut[(co * hout + oy) * hout + ox] * w[((co * cin + ci) * KS + ky) * KS + kx];
            }
    const int idx = (ci * hin + y) * hin + x;
    dIn[idx] = act[idx] > 0.0f ? acc : 0.0f;
}

// One block per weight: dW[co][ci][ky][kx] = sum_{y,x} dOut[co][y][x] * in[ci][y+ky][x+kx]
__global__ void convBackwardWeights(const float* dOut, const float* in, float* dW, int cin, int hin, int hout) {
    __shared__ float partial[RED_THREADS];
    const int widx = blockIdx.x;
    const int kx = widx % KS, ky = (widx / KS) % KS, ci = (widx / (KS * KS)) % cin, co = widx / (KS * KS * cin);

    float acc = 0.0f;
    for (int p = threadIdx.x; p < hout * hout; p += blockDim.x) {
        const int y = p / hout, x = p % hout;
        acc += dOut[(co * hout + y) * hout + x] * in[(ci * hin + y + ky) * hin + x + kx];
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) dW[widx] = partial[0];
}

__global__ void lossGrad(const float* out, const float* target, float* dOut, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dOut[i] = out[i] - target[i];
}

// Host forward pass in double precision, for the finite-difference check.
static double hostLoss(const std::vector<float>& x, const std::vector<double>& w1, const std::vector<double>& w2,
                       const std::vector<float>& target) {
    std::vector<double> a1(C1 * H1 * H1), a2(C2 * H2 * H2);
    for (int co = 0; co < C1; ++co)
        for (int y = 0; y < H1; ++y)
            for (int xx = 0; xx < H1; ++xx) {
                double acc = 0;
                for (int ky = 0; ky < KS; ++ky)
                    for (int kx = 0; kx < KS; ++kx) acc += x[(y + ky) * H0 + xx + kx] * w1[(co * KS + ky) * KS + kx];
                a1[(co * H1 + y) * H1 + xx] = acc > 0 ? acc : 0;
            }
    double loss = 0;
    for (int co = 0; co < C2; ++co)
        for (int y = 0; y < H2; ++y)
            for (int xx = 0; xx < H2; ++xx) {
                double acc = 0;
                for (int ci = 0; ci < C1; ++ci)
                    for (int ky = 0; ky < KS; ++ky)
                        for (int kx = 0; kx < KS; ++kx)
                            acc += a1[(ci * H1 + y + ky) * H1 + xx + kx] * w2[((co * C1 + ci) * KS + ky) * KS + kx];
                const double d = acc - target[(co * H2 + y) * H2 + xx];
                loss += 0.5 * d * d;
            }
    return loss;
}

int main() {
    const int nW1 = C1 * 1 * KS * KS, nW2 = C2 * C1 * KS * KS;
    std::vector<float> x(H0 * H0), w1(nW1), w2(nW2), target(C2 * H2 * H2);
    for (int i = 0; i < H0 * H0; ++i) x[i] = (float)((i * 7 + (i / H0) * 3) % 17) / 17.0f - 0.47f;
    for (int i = 0; i < nW1; ++i) w1[i] = (float)((i * 5) % 9 - 3) / 8.0f;
    for (int i = 0; i < nW2; ++i) w2[i] = (float)((i * 11) % 13 - 6) / 16.0f;
    for (int i = 0; i < C2 * H2 * H2; ++i) target[i] = (float)(i % 5) / 4.0f - 0.5f;

    float *dX, *dW1, *dW2, *dA1, *dOut, *dT, *dGOut, *dGA1, *dGW1, *dGW2;
    CUDA_CHECK(cudaMalloc(&dX, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dW1, nW1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dW2, nW2 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dA1, C1 * H1 * H1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, C2 * H2 * H2 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dT, target.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dGOut, C2 * H2 * H2 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dGA1, C1 * H1 * H1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dGW1, nW1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dGW2, nW2 * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dX, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dW1, w1.data(), nW1 * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dW2, w2.data(), nW2 * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dT, target.data(), target.size() * sizeof(float), cudaMemcpyHostToDevice));

    const dim3 block(16, 16);
    convForward<<<dim3((H1 + 15) / 16, (H1 + 15) / 16, C1), block>>>(dX, dW1, dA1, 1, H0, H1, true);
    convForward<<<dim3((H2 + 15) / 16, (H2 + 15) / 16, C2), block>>>(dA1, dW2, dOut, C1, H1, H2, false);
    lossGrad<<<(C2 * H2 * H2 + 255) / 256, 256>>>(dOut, dT, dGOut, C2 * H2 * H2);
    convBackwardWeights<<<nW2, RED_THREADS>>>(dGOut, dA1, dGW2, C1, H1, H2);
    convBackwardData<<<dim3((H1 + 15) / 16, (H1 + 15) / 16, C1), block>>>(dGOut, dW2, dA1, dGA1, C1, C2, H1, H2);
    convBackwardWeights<<<nW1, RED_THREADS>>>(dGA1, dX, dGW1, 1, H0, H1);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> gw1(nW1), gw2(nW2);
    CUDA_CHECK(cudaMemcpy(gw1.data(), dGW1, nW1 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gw2.data(), dGW2, nW2 * sizeof(float), cudaMemcpyDeviceToHost));

    // Central finite differences on a few weights of each layer.
    std::vector<double> w1d(w1.begin(), w1.end()), w2d(w2.begin(), w2.end());
    const double eps = 1e-4;
    int checked = 0, bad = 0;
    for (int k = 0; k < nW1; k += 4) {
        std::vector<double> p = w1d, m = w1d;
        p[k] += eps;
        m[k] -= eps;
        const double num = (hostLoss(x, p, w2d, target) - hostLoss(x, m, w2d, target)) / (2 * eps);
        if (fabs(num - gw1[k]) > 1e-2 * (1.0 + fabs(num))) ++bad;
        ++checked;
    }
    for (int k = 0; k < nW2; k += 9) {
        std::vector<double> p = w2d, m = w2d;
        p[k] += eps;
        m[k] -= eps;
        const double num = (hostLoss(x, w1d, p, target) - hostLoss(x, w1d, m, target)) / (2 * eps);
        if (fabs(num - gw2[k]) > 1e-2 * (1.0 + fabs(num))) ++bad;
        ++checked;
    }

    double s1 = 0, s2 = 0;
    for (float g : gw1) s1 += g;
    for (float g : gw2) s2 += g;
    printf("loss=%.3f\n", hostLoss(x, w1d, w2d, target));
    printf("dW1[0]=%.2f dW1[4]=%.2f sum(dW1)=%.2f\n", gw1[0], gw1[4], s1);
    printf("dW2[0]=%.2f dW2[71]=%.2f sum(dW2)=%.1f\n", gw2[0], gw2[nW2 - 1], s2);
    printf("finite-difference check: %d/%d weights agree\n", checked - bad, checked);

    float* bufs[] = {dX, dW1, dW2, dA1, dOut, dT, dGOut, dGA1, dGW1, dGW2};
    for (float* b : bufs) CUDA_CHECK(cudaFree(b));
    return bad == 0 ? 0 : 1;
}
