// Sparse convolution with a 5x5 filter on a sparse 128x128 input (about 6%
// non-zero pixels in COO format), focused on skipping zero work: instead of
// visiting every output pixel, one thread per non-zero input scatters its
// contribution to the 25 output pixels it touches with atomicAdd. The filter
// lives in __constant__ memory. Inputs and weights are small integers, so
// the float atomics are exact and the result is order independent.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t e = (call);                                                 \
        if (e != cudaSuccess) {                                                 \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e),  \
                    __FILE__, __LINE__);                                        \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

#define W 128
#define H 128
#define FS 5
#define FR (FS / 2)

__constant__ float cFilter[FS * FS];

struct SparsePixel {
    int x, y;
    float value;
};

// out[y][x] = sum_{fy,fx} in[y + fy - FR][x + fx - FR] * f[fy][fx]  ("same" correlation, zero padding)
// A non-zero at (px, py) therefore reaches out[py - (fy - FR)][px - (fx - FR)].
__global__ void sparseConvScatter(const SparsePixel* __restrict__ nz, int count, float* out) {
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < count; t += blockDim.x * gridDim.x) {
        const SparsePixel p = nz[t];
        for (int fy = 0; fy < FS; ++fy) {
            const int oy = p.y - (fy - FR);
            if (oy < 0 || oy >= H) continue;
            for (int fx = 0; fx < FS; ++fx) {
                const int ox = p.x - (fx - FR);
                if (ox < 0 || ox >= W) continue;
                atomicAdd(&out[oy * W + ox], p.value * cFilter[fy * FS + fx]);
            }
        }
    }
}

int main() {
    std::vector<float> dense(W * H, 0.0f);
    std::vector<SparsePixel> nz;
    unsigned int s = 7u;
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            s = s * 1664525u + 1013904223u;
            if ((s >> 24) < 16) {  // ~6.25% density
                const float v = (float)((s >> 8) % 9 + 1);
                dense[y * W + x] = v;
                nz.push_back({x, y, v});
            }
        }
    float hFilter[FS * FS];
    for (int i = 0; i < FS * FS; ++i) hFilter[i] = (float)((i * 7) % 5 - 2);

    SparsePixel* dNz;
    float* dOut;
    CUDA_CHECK(cudaMalloc(&dNz, nz.size() * sizeof(SparsePixel)));
    CUDA_CHECK(cudaMalloc(&dOut, W * H * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dNz, nz.data(), nz.size() * sizeof(SparsePixel), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dOut, 0, W * H * sizeof(float)));
    CUDA_CHECK(cudaMemcpyToSymbol(cFilter, hFilter, sizeof(hFilter)));

    sparseConvScatter<<<8, 128>>>(dNz, (int)nz.size(), dOut);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> out(W * H);
    CUDA_CHECK(cudaMemcpy(out.data(), dOut, W * H * sizeof(float), cudaMemcpyDeviceToHost));

    // Dense reference.
    int mismatches = 0, nonzeroOut = 0;
    long long checksum = 0;
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            float ref = 0.0f;
            for (int fy = 0; fy < FS; ++fy)
                for (int fx = 0; fx < FS; ++fx) {
                    const int iy = y + fy - FR, ix = x + fx - FR;
                    if (iy >= 0 && iy < H && ix >= 0 && ix < W) ref += dense[iy * W + ix] * hFilter[fy * FS + fx];
                }
            if (ref != out[y * W + x]) ++mismatches;
            if (out[y * W + x] != 0.0f) ++nonzeroOut;
            checksum += (long long)out[y * W + x] * ((x + 2 * y) % 7 + 1);
        }

    printf("input %dx%d with %d non-zeros, filter %dx%d\n", W, H, (int)nz.size(), FS, FS);
    printf("non-zero outputs=%d weighted checksum=%lld\n", nonzeroOut, checksum);
    printf("out[0][0]=%.1f out[64][64]=%.1f out[127][100]=%.1f\n", out[0], out[64 * W + 64], out[127 * W + 100]);
    printf("dense reference: %s\n", mismatches == 0 ? "PASS" : "FAIL");

    CUDA_CHECK(cudaFree(dNz));
    CUDA_CHECK(cudaFree(dOut));
    return mismatches == 0 ? 0 : 1;
}
