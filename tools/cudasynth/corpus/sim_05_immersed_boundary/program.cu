// Fluid-structure interaction with 256 boundary elements using the immersed
// boundary method on a periodic 64x64 fluid grid, focused on deterministic
// force spreading: each Lagrangian marker spreads its elastic force onto the
// 4x4 surrounding grid nodes through a cosine delta kernel, accumulating in
// 64-bit fixed point with integer atomicAdd, so the sum is exact and
// independent of thread order (float atomics would not be). An elliptic
// elastic membrane under tension contracts and rounds up in a viscous
// (Stokes-like, compressible) medium:
//   spread forces -> smooth with Jacobi diffusion sweeps -> interpolate the
//   grid velocity back to the markers -> move the markers.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t e = (call);                                                \
        if (e != cudaSuccess) {                                                \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), \
                    __FILE__, __LINE__);                                       \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

#define NG 64                 // grid nodes per side, spacing h = 1
#define NUM_MARKERS 256
#define FIXED_SCALE 1048576.0f  // 2^20
#define STIFFNESS 8.0f
#define MOBILITY 0.8f
#define STEPS 60
#define SMOOTH_SWEEPS 4

__device__ __forceinline__ float deltaWeight(float r) {
    r = fabsf(r);
    return r < 2.0f ? 0.25f * (1.0f + cospif(0.5f * r)) : 0.0f;
}

__device__ __forceinline__ int wrap(int i) { return (i % NG + NG) % NG; }

// Elastic force: each marker is pulled towards its neighbours along the ring.
__global__ void markerForces(const float2* X, float2* F, int m) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m) return;
    const float2 p = X[k], a = X[(k + m - 1) % m], b = X[(k + 1) % m];
    F[k] = make_float2(STIFFNESS * ((a.x - p.x) + (b.x - p.x)), STIFFNESS * ((a.y - p.y) + (b.y - p.y)));
}

__global__ void spreadForces(const float2* X, const float2* F, unsigned long long* gridFx, unsigned long long* gridFy,
                             int m) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m) return;
    const float2 p = X[k];
    const int i0 = (int)floorf(p.x) - 1, j0 = (int)floorf(p.y) - 1;
    for (int dj = 0; dj < 4; ++dj)
        for (int di = 0; di < 4; ++di) {
            const int i = i0 + di, j = j0 + dj;
            const float w = deltaWeight(p.x - i) * deltaWeight(p.y - j);
            const long long fx = llrintf(w * F[k].x * FIXED_SCALE);
            const long long fy = llrintf(w * F[k].y * FIXED_SCALE);
            const int idx = wrap(j) * NG + wrap(i);
            atomicAdd(&gridFx[idx], (unsigned long long)fx);  // two's complement wraps correctly
            atomicAdd(&gridFy[idx], (unsigned long long)fy);
        }
}

// Grid velocity u = MOBILITY * f, then smoothed with Jacobi diffusion sweeps.
__global__ void fixedToVelocity(const unsigned long long* gfx, const unsigned long long* gfy, float2* u) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= NG || j >= NG) return;
    const int idx = j * NG + i;
    u[idx] = make_float2(MOBILITY * (float)(long long)gfx[idx] / FIXED_SCALE,
                         MOBILITY * (float)(long long)gfy[idx] / FIXED_SCALE);
}

__global__ void smooth(const float2* u, float2* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= NG || j >= NG) return;
    const float2 c = u[j * NG + i];
    const float2 l = u[j * NG + wrap(i - 1)], r = u[j * NG + wrap(i + 1)];
    const float2 d = u[wrap(j - 1) * NG + i], t = u[wrap(j + 1) * NG + i];
    out[j * NG + i] = make_float2(0.5f * c.x + 0.125f * ((l.x + r.x) + (d.x + t.x)),
                                  0.5f * c.y + 0.125f * ((l.y + r.y) + (d.y + t.y)));
}

__global__ void interpolateAndMove(float2* X, const float2* u, int m) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m) return;
    const float2 p = X[k];
    const int i0 = (int)floorf(p.x) - 1, j0 = (int)floorf(p.y) - 1;
    float2 vel = make_float2(0.0f, 0.0f);
    for (int dj = 0; dj < 4; ++dj)
        for (int di = 0; di < 4; ++di) {
            const int i = i0 + di, j = j0 + dj;
            const float w = deltaWeight(p.x - i) * deltaWeight(p.y - j);
            const float2 g = u[wrap(j) * NG + wrap(i)];
            vel.x += w * g.x;
            vel.y += w * g.y;
        }
    X[k] = make_float2(p.x + vel.x, p.y + vel.y);
}

static double ringArea(const float2* X, int m) {
    double a = 0.0;
    for (int k = 0; k < m; ++k) {
        const float2 p = X[k], q = X[(k + 1) % m];
        a += (double)p.x * q.y - (double)q.x * p.y;
    }
    return 0.5 * fabs(a);
}

int main() {
    // An ellipse with semi-axes 12 and 6 centred in the domain.
    float2 hX[NUM_MARKERS];
    const double PI = 3.14159265358979323846;
    for (int k = 0; k < NUM_MARKERS; ++k) {
        const double th = 2.0 * PI * k / NUM_MARKERS;
        hX[k] = make_float2((float)(32.0 + 12.0 * cos(th)), (float)(32.0 + 6.0 * sin(th)));
    }
    const double area0 = ringArea(hX, NUM_MARKERS);

    float2 *dX, *dF, *dU, *dTmp;
    unsigned long long *dGx, *dGy;
    CUDA_CHECK(cudaMalloc(&dX, sizeof(hX)));
    CUDA_CHECK(cudaMalloc(&dF, sizeof(hX)));
    CUDA_CHECK(cudaMalloc(&dU, NG * NG * sizeof(float2)));
    CUDA_CHECK(cudaMalloc(&dTmp, NG * NG * sizeof(float2)));
    CUDA_CHECK(cudaMalloc(&dGx, NG * NG * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc(&dGy, NG * NG * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(dX, hX, sizeof(hX), cudaMemcpyHostToDevice));

    const dim3 block2d(16, 16), grid2d(NG / 16, NG / 16);
    const int mBlocks = (NUM_MARKERS + 127) / 128;
    for (int step = 0; step < STEPS; ++step) {
        CUDA_CHECK(cudaMemset(dGx, 0, NG * NG * sizeof(unsigned long long)));
        CUDA_CHECK(cudaMemset(dGy, 0, NG * NG * sizeof(unsigned long long)));
        markerForces<<<mBlocks, 128>>>(dX, dF, NUM_MARKERS);
        spreadForces<<<mBlocks, 128>>>(dX, dF, dGx, dGy, NUM_MARKERS);
        fixedToVelocity<<<grid2d, block2d>>>(dGx, dGy, dU);
        for (int s = 0; s < SMOOTH_SWEEPS; s += 2) {
            smooth<<<grid2d, block2d>>>(dU, dTmp);
            smooth<<<grid2d, block2d>>>(dTmp, dU);
        }
        interpolateAndMove<<<mBlocks, 128>>>(dX, dU, NUM_MARKERS);
        CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaMemcpy(hX, dX, sizeof(hX), cudaMemcpyDeviceToHost));

    double minR = 1e9, maxR = 0.0, cx = 0.0, cy = 0.0;
    for (int k = 0; k < NUM_MARKERS; ++k) {
        cx += hX[k].x / NUM_MARKERS;
        cy += hX[k].y / NUM_MARKERS;
    }
    for (int k = 0; k < NUM_MARKERS; ++k) {
        const double r = hypot(hX[k].x - cx, hX[k].y - cy);
        minR = fmin(minR, r);
        maxR = fmax(maxR, r);
    }
    printf("markers=%d grid=%dx%d steps=%d\n", NUM_MARKERS, NG, NG, STEPS);
    printf("initial: aspect ratio=2.000 area=%.2f\n", area0);
    printf("final: aspect ratio=%.3f area=%.2f centroid=(%.3f, %.3f)\n", maxR / minR, ringArea(hX, NUM_MARKERS), cx, cy);
    printf("marker 0=(%.3f, %.3f) marker 64=(%.3f, %.3f)\n", hX[0].x, hX[0].y, hX[64].x, hX[64].y);

    cudaFree(dX); cudaFree(dF); cudaFree(dU); cudaFree(dTmp); cudaFree(dGx); cudaFree(dGy);
    return 0;
}
