// Training a fully connected neural network with 3 layers (16 -> 64 -> 64 -> 1,
// 64 neurons per hidden layer) by full-batch gradient descent on a synthetic
// regression task, focused on deterministic, atomic-free backpropagation:
// forward layers run on a 2D grid (sample x neuron), and each weight gradient
// is owned by exactly one thread that loops over the batch, so results are
// reproducible run to run. The layer kernels are templates on the activation.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error '%s' at %s:%d\n", cudaGetErrorString(e_), \
                    __FILE__, __LINE__);                                       \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

constexpr int BATCH = 256;
constexpr int IN = 16;
constexpr int HID = 64;
constexpr int OUT = 1;
constexpr int EPOCHS = 60;
constexpr float LR = 0.05f;

enum Activation { LINEAR, RELU };

// out[b][j] = act(sum_i in[b][i] * W[i][j] + bias[j]); grid.x over neurons, grid.y over samples.
template <Activation ACT>
__global__ void denseForward(const float* in, const float* W, const float* bias, float* out, int nIn, int nOut) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (j >= nOut || b >= BATCH) return;
    float acc = bias[j];
    for (int i = 0; i < nIn; ++i) acc += in[b * nIn + i] * W[i * nOut + j];
    if (ACT == RELU) acc = fmaxf(acc, 0.0f);
    out[b * nOut + j] = acc;
}

// dIn[b][i] = (sum_j dOut[b][j] * W[i][j]) * act'(in[b][i])  (act' of the layer that produced `in`)
template <Activation ACT>
__global__ void denseBackwardData(const float* dOut, const float* W, const float* in, float* dIn, int nIn, int nOut) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nIn || b >= BATCH) return;
    float acc = 0.0f;
    for (int j = 0; j < nOut; ++j) acc += dOut[b * nOut + j] * W[i * nOut + j];
    if (ACT == RELU && in[b * nIn + i] <= 0.0f) acc = 0.0f;
    dIn[b * nIn + i] = acc;
}

// One thread per weight (and per bias): gradient summed over the batch, then an SGD step.
__global__ void denseUpdate(const float* in, const float* dOut, float* W, float* bias, int nIn, int nOut, float lr) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < nIn * nOut) {
        const int i = idx / nOut, j = idx % nOut;
        float g = 0.0f;
        for (int b = 0; b < BATCH; ++b) g += in[b * nIn + i] * dOut[b * nOut + j];
        W[idx] -= lr * g / BATCH;
    } else if (idx < nIn * nOut + nOut) {
        const int j = idx - nIn * nOut;
        float g = 0.0f;
        for (int b = 0; b < BATCH; ++b) g += dOut[b * nOut + j];
        bias[j] -= lr * g / BATCH;
    }
}

__global__ void mseGrad(const float* pred, const float* target, float* dPred) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < BATCH) dPred[b] = 2.0f * (pred[b] - target[b]);
}

static float initWeight(unsigned int idx, float scale) {
    unsigned int h = idx * 2654435761u + 0x9e3779b9u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return ((float)(h & 0xffff) / 65535.0f - 0.5f) * 2.0f * scale;
}

static float* toDevice(const std::vector<float>& v) {
    float* d = nullptr;
    CUDA_CHECK(cudaMalloc(&d, v.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

static float* deviceBuffer(size_t n) {
    float* d = nullptr;
    CUDA_CHECK(cudaMalloc(&d, n * sizeof(float)));
    return d;
}

int main() {
    std::vector<float> X(BATCH * IN), Y(BATCH);
    for (int b = 0; b < BATCH; ++b) {
        float t = 0.0f;
        for (int i = 0; i < IN; ++i) {
            X[b * IN + i] = (float)((b * 13 + i * 7) % 21 - 10) / 10.0f;
            t += (i % 3 == 0 ? 0.3f : -0.1f) * X[b * IN + i];
        }
        Y[b] = t * t * 0.5f + 0.2f * t;  // a smooth nonlinear target
    }
    std::vector<float> W1(IN * HID), W2(HID * HID), W3(HID * OUT), b1(HID, 0.0f), b2(HID, 0.0f), b3(OUT, 0.0f);
    for (size_t k = 0; k < W1.size(); ++k) W1[k] = initWeight((unsigned)k, 0.35f);
    for (size_t k = 0; k < W2.size(); ++k) W2[k] = initWeight((unsigned)k + 10000u, 0.17f);
    for (size_t k = 0; k < W3.size(); ++k) W3[k] = initWeight((unsigned)k + 20000u, 0.17f);

    float *dX = toDevice(X), *dY = toDevice(Y);
    float *dW1 = toDevice(W1), *dW2 = toDevice(W2), *dW3 = toDevice(W3);
    float *db1 = toDevice(b1), *db2 = toDevice(b2), *db3 = toDevice(b3);
    float *dH1 = deviceBuffer(BATCH * HID), *dH2 = deviceBuffer(BATCH * HID), *dP = deviceBuffer(BATCH);
    float *dG1 = deviceBuffer(BATCH * HID), *dG2 = deviceBuffer(BATCH * HID), *dGP = deviceBuffer(BATCH);

    const dim3 block(16, 16);
    const dim3 gridHid((HID + 15) / 16, BATCH / 16), gridOut(1, BATCH / 16);
    std::vector<float> pred(BATCH);

    for (int epoch = 0; epoch <= EPOCHS; ++epoch) {
        denseForward<RELU><<<gridHid, block>>>(dX, dW1, db1, dH1, IN, HID);
        denseForward<RELU><<<gridHid, block>>>(dH1, dW2, db2, dH2, HID, HID);
        denseForward<LINEAR><<<gridOut, block>>>(dH2, dW3, db3, dP, HID, OUT);
        CUDA_CHECK(cudaGetLastError());

        if (epoch % 10 == 0) {
            CUDA_CHECK(cudaMemcpy(pred.data(), dP, BATCH * sizeof(float), cudaMemcpyDeviceToHost));
            double loss = 0.0;
            for (int b = 0; b < BATCH; ++b) loss += (pred[b] - Y[b]) * (double)(pred[b] - Y[b]);
            printf("epoch %2d  mse=%.4f\n", epoch, loss / BATCH);
        }
        if (epoch == EPOCHS) break;

        mseGrad<<<(BATCH + 127) / 128, 128>>>(dP, dY, dGP);
        denseBackwardData<RELU><<<gridHid, block>>>(dGP, dW3, dH2, dG2, HID, OUT);
        denseBackwardData<RELU><<<gridHid, block>>>(dG2, dW2, dH1, dG1, HID, HID);
        denseUpdate<<<(HID * OUT + OUT + 127) / 128, 128>>>(dH2, dGP, dW3, db3, HID, OUT, LR);
        denseUpdate<<<(HID * HID + HID + 127) / 128, 128>>>(dH1, dG2, dW2, db2, HID, HID, LR);
        denseUpdate<<<(IN * HID + HID + 127) / 128, 128>>>(dX, dG1, dW1, db1, IN, HID, LR);
        CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    // Baseline: the error of always predicting 0.
    double trivial = 0.0, last = 0.0;
    for (int b = 0; b < BATCH; ++b) last += (pred[b] - Y[b]) * (double)(pred[b] - Y[b]);
    for (int b = 0; b < BATCH; ++b) trivial += Y[b] * (double)Y[b];
    printf("prediction[0]=%.3f target[0]=%.3f\n", pred[0], Y[0]);
    printf("beats the zero predictor: %s\n", last < trivial ? "yes" : "no");

    float* bufs[] = {dX, dY, dW1, dW2, dW3, db1, db2, db3, dH1, dH2, dP, dG1, dG2, dGP};
    for (float* p : bufs) CUDA_CHECK(cudaFree(p));
    return 0;
}
