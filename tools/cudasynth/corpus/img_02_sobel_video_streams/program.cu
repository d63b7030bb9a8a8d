// Real-time video processing of 720p (1280x720) grayscale frames, focused on
// pipelining with CUDA streams: 6 frames are processed round-robin on 3
// streams, each with its own pinned host buffers, so the upload of one frame
// overlaps the Sobel edge detection and download of others. Each frame also
// gets a 256-bin histogram of the gradient magnitude, built with fast
// shared-memory atomics and merged into global memory per block. Per-frame
// latency is measured with events and reported on stderr.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err = (call);                                               \
        if (err != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error '%s' at %s:%d\n", cudaGetErrorString(err), \
                    __FILE__, __LINE__);                                        \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define FRAME_W 1280
#define FRAME_H 720
#define NUM_FRAMES 6
#define NUM_STREAMS 3
#define BINS 256

__global__ void sobelHistogram(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                               unsigned int* __restrict__ hist, int w, int h) {
    __shared__ unsigned int sHist[BINS];
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (int b = tid; b < BINS; b += blockDim.x * blockDim.y) sHist[b] = 0;
    __syncthreads();

    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        int mag = 0;
        if (x > 0 && y > 0 && x < w - 1 && y < h - 1) {
            const int p00 = in[(y - 1) * w + x - 1], p01 = in[(y - 1) * w + x], p02 = in[(y - 1) * w + x + 1];
            const int p10 = in[y * w + x - 1], p12 = in[y * w + x + 1];
            const int p20 = in[(y + 1) * w + x - 1], p21 = in[(y + 1) * w + x], p22 = in[(y + 1) * w + x + 1];
            const int gx = (p02 + 2 * p12 + p22) - (p00 + 2 * p10 + p20);
            const int gy = (p20 + 2 * p21 + p22) - (p00 + 2 * p01 + p02);
            mag = min(abs(gx) + abs(gy), 255);
        }
        out[y * w + x] = (unsigned char)mag;
        atomicAdd(&sHist[mag], 1u);
    }
    __syncthreads();
    for (int b = tid; b < BINS; b += blockDim.x * blockDim.y)
        if (sHist[b]) atomicAdd(&hist[b], sHist[b]);
}

// Synthetic frame f: a bright rectangle moving right over a horizontal gradient.
static void makeFrame(unsigned char* frame, int f) {
    for (int y = 0; y < FRAME_H; ++y)
        for (int x = 0; x < FRAME_W; ++x) {
            int v = x / 8 + y / 16;
            const int rx = 100 + f * 150;
            if (x >= rx && x < rx + 300 && y >= 200 && y < 500) v = 230;
            if ((x - 640) * (x - 640) + (y - 360) * (y - 360) < 80 * 80) v = 10 + f * 5;
            frame[y * FRAME_W + x] = (unsigned char)(v > 255 ? 255 : v);
        }
}

int main() {
    const size_t frameBytes = (size_t)FRAME_W * FRAME_H;
    unsigned char *hIn[NUM_STREAMS], *hOut[NUM_STREAMS], *dIn[NUM_STREAMS], *dOut[NUM_STREAMS];
    unsigned int *dHist[NUM_STREAMS], *hHist[NUM_STREAMS];
    cudaStream_t streams[NUM_STREAMS];
    cudaEvent_t evStart[NUM_FRAMES], evStop[NUM_FRAMES];

    for (int s = 0; s < NUM_STREAMS; ++s) {
        CUDA_CHECK(cudaStreamCreate(&streams[s]));
        CUDA_CHECK(cudaMallocHost(&hIn[s], frameBytes));
        CUDA_CHECK(cudaMallocHost(&hOut[s], frameBytes));
        CUDA_CHECK(cudaMallocHost(&hHist[s], BINS * sizeof(unsigned int)));
        CUDA_CHECK(cudaMalloc(&dIn[s], frameBytes));
        CUDA_CHECK(cudaMalloc(&dOut[s], frameBytes));
        CUDA_CHECK(cudaMalloc(&dHist[s], BINS * sizeof(unsigned int)));
    }
    for (int f = 0; f < NUM_FRAMES; ++f) {
        CUDA_CHECK(cudaEventCreate(&evStart[f]));
        CUDA_CHECK(cudaEventCreate(&evStop[f]));
    }

    const dim3 block(32, 8);
    const dim3 grid((FRAME_W + block.x - 1) / block.x, (FRAME_H + block.y - 1) / block.y);
    for (int batch = 0; batch < NUM_FRAMES; batch += NUM_STREAMS) {
        for (int s = 0; s < NUM_STREAMS; ++s) {  // enqueue one frame per stream
            const int f = batch + s;
            makeFrame(hIn[s], f);
            CUDA_CHECK(cudaEventRecord(evStart[f], streams[s]));
            CUDA_CHECK(cudaMemcpyAsync(dIn[s], hIn[s], frameBytes, cudaMemcpyHostToDevice, streams[s]));
            CUDA_CHECK(cudaMemsetAsync(dHist[s], 0, BINS * sizeof(unsigned int), streams[s]));
            sobelHistogram<<<grid, block, 0, streams[s]>>>(dIn[s], dOut[s], dHist[s], FRAME_W, FRAME_H);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpyAsync(hOut[s], dOut[s], frameBytes, cudaMemcpyDeviceToHost, streams[s]));
            CUDA_CHECK(cudaMemcpyAsync(hHist[s], dHist[s], BINS * sizeof(unsigned int), cudaMemcpyDeviceToHost, streams[s]));
            CUDA_CHECK(cudaEventRecord(evStop[f], streams[s]));
        }
        for (int s = 0; s < NUM_STREAMS; ++s) {  // consume results in frame order
            const int f = batch + s;
            CUDA_CHECK(cudaStreamSynchronize(streams[s]));
            float ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, evStart[f], evStop[f]));
            fprintf(stderr, "frame %d latency %.3f ms\n", f, ms);

            unsigned long long total = 0, strong = 0, sum = 0;
            for (int b = 0; b < BINS; ++b) {
                total += hHist[s][b];
                if (b >= 128) strong += hHist[s][b];
                sum += (unsigned long long)b * hHist[s][b];
            }
            unsigned long long pixelSum = 0;
            for (size_t i = 0; i < frameBytes; ++i) pixelSum += hOut[s][i];
            printf("frame %d: pixels=%llu strong edges=%llu mean magnitude=%.4f consistent=%s\n", f, total, strong,
                   (double)sum / total, pixelSum == sum ? "yes" : "no");
        }
    }

    for (int f = 0; f < NUM_FRAMES; ++f) {
        cudaEventDestroy(evStart[f]);
        cudaEventDestroy(evStop[f]);
    }
    for (int s = 0; s < NUM_STREAMS; ++s) {
        cudaStreamDestroy(streams[s]);
        cudaFreeHost(hIn[s]);
        cudaFreeHost(hOut[s]);
        cudaFreeHost(hHist[s]);
        cudaFree(dIn[s]);
        cudaFree(dOut[s]);
        cudaFree(dHist[s]);
    }
    return 0;
}
