// Cloth simulation on a 32x32 grid of particles (mass-spring model with
// structural, shear and bending springs), optimized for memory bandwidth:
// one thread per particle on a 2D grid, positions stored as float4 for
// aligned 16-byte loads, spring topology derived from the grid index instead
// of being stored, and position Verlet integration with ping-pong buffers
// (no velocity array). The two top corners are pinned.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                         \
    do {                                                                         \
        cudaError_t err = (call);                                                \
        if (err != cudaSuccess) {                                                \
            fprintf(stderr, "CUDA error: %s at %s:%d\n", cudaGetErrorString(err), \
                    __FILE__, __LINE__);                                         \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

#define GRID_N 32
#define SPACING 0.1f
#define MASS 0.01f  // per particle: the whole cloth weighs about 10 kg
#define STIFFNESS 2000.0f
#define DAMPING 0.999f
#define DT 0.0005f
#define STEPS 1000
#define GRAVITY -9.81f

__device__ __forceinline__ void addSpring(float3& force, float4 p, float4 q, float rest) {
    const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    const float len = sqrtf(dx * dx + dy * dy + dz * dz);
    if (len > 1e-6f) {
        const float f = STIFFNESS * (len - rest) / len;
        force.x += f * dx;
        force.y += f * dy;
        force.z += f * dz;
    }
}

__global__ void clothStep(const float4* __restrict__ cur, const float4* __restrict__ prev, float4* __restrict__ next) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= GRID_N || y >= GRID_N) return;
    const int idx = y * GRID_N + x;
    const float4 p = cur[idx];

    if (y == 0 && (x == 0 || x == GRID_N - 1)) {  // pinned corners
        next[idx] = p;
        return;
    }

    float3 force = make_float3(0.0f, MASS * GRAVITY, 0.0f);
    const int offsets[12][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1},      // structural
                                {1, 1}, {-1, -1}, {1, -1}, {-1, 1},    // shear
                                {2, 0}, {-2, 0}, {0, 2}, {0, -2}};     // bending
    for (int s = 0; s < 12; ++s) {
        const int nx = x + offsets[s][0], ny = y + offsets[s][1];
        if (nx < 0 || nx >= GRID_N || ny < 0 || ny >= GRID_N) continue;
        const float rest = SPACING * sqrtf((float)(offsets[s][0] * offsets[s][0] + offsets[s][1] * offsets[s][1]));
        addSpring(force, p, cur[ny * GRID_N + nx], rest);
    }

    // x_{n+1} = x_n + damping * (x_n - x_{n-1}) + (F / m) * dt^2
    const float4 q = prev[idx];
    const float s = DT * DT / MASS;
    next[idx] = make_float4(p.x + DAMPING * (p.x - q.x) + force.x * s,
                            p.y + DAMPING * (p.y - q.y) + force.y * s,
                            p.z + DAMPING * (p.z - q.z) + force.z * s, 0.0f);
}

int main() {
    const int count = GRID_N * GRID_N;
    float4* h = (float4*)malloc(count * sizeof(float4));
    // Cloth starts horizontal (in the x-z plane) at height 0.
    for (int y = 0; y < GRID_N; ++y)
        for (int x = 0; x < GRID_N; ++x) h[y * GRID_N + x] = make_float4(x * SPACING, 0.0f, y * SPACING, 0.0f);

    float4 *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, count * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&dB, count * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&dC, count * sizeof(float4)));
    CUDA_CHECK(cudaMemcpy(dA, h, count * sizeof(float4), cudaMemcpyHostToDevice));  // previous
    CUDA_CHECK(cudaMemcpy(dB, h, count * sizeof(float4), cudaMemcpyHostToDevice));  // current (at rest)

    dim3 block(16, 16);
    dim3 grid((GRID_N + 15) / 16, (GRID_N + 15) / 16);
    float4 *prev = dA, *cur = dB, *next = dC;
    for (int step = 0; step < STEPS; ++step) {
        clothStep<<<grid, block>>>(cur, prev, next);
        float4* t = prev;
        prev = cur;
        cur = next;
        next = t;
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h, cur, count * sizeof(float4), cudaMemcpyDeviceToHost));

    double minY = 1e9, sumY = 0.0;
    bool finite = true;
    for (int i = 0; i < count; ++i) {
        if (!std::isfinite(h[i].x) || !std::isfinite(h[i].y) || !std::isfinite(h[i].z)) finite = false;
        if (h[i].y < minY) minY = h[i].y;
        sumY += h[i].y;
    }
    const float4 corner = h[(GRID_N - 1) * GRID_N + GRID_N - 1];
    const float4 mid = h[(GRID_N / 2) * GRID_N + GRID_N / 2];
    printf("cloth %dx%d, %d steps of %.4f s\n", GRID_N, GRID_N, STEPS, DT);
    printf("pinned corner (0,0): (%.3f, %.3f, %.3f)\n", h[0].x, h[0].y, h[0].z);
    printf("free corner: (%.3f, %.3f, %.3f)\n", corner.x, corner.y, corner.z);
    printf("center: (%.3f, %.3f, %.3f)\n", mid.x, mid.y, mid.z);
    printf("lowest y=%.3f mean y=%.3f\n", minY, sumY / count);
    printf("state finite: %s\n", finite ? "yes" : "no");

    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(h);
    return finite ? 0 : 1;
}
