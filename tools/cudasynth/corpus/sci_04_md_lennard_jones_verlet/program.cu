// Molecular dynamics of 256 Lennard-Jones particles integrated with the
// velocity Verlet algorithm, optimized for data reuse: the all-pairs force
// kernel processes the particles in tiles of 64 staged in shared memory, so
// each position is fetched from global memory once per tile instead of once
// per pair. Reduced units (sigma = epsilon = mass = 1).
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t e = (call);                                                \
        if (e != cudaSuccess) {                                                \
            fprintf(stderr, "CUDA error '%s' in %s line %d\n",                 \
                    cudaGetErrorString(e), __FILE__, __LINE__);                \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define NUM_PARTICLES 256
#define TILE 64
#define DT 0.002f
#define STEPS 100

__device__ float3 ljPair(float3 pi, float3 pj, float* energy) {
    const float dx = pi.x - pj.x, dy = pi.y - pj.y, dz = pi.z - pj.z;
    const float r2 = dx * dx + dy * dy + dz * dz;
    if (r2 == 0.0f) return make_float3(0.0f, 0.0f, 0.0f);  // self
    const float inv2 = 1.0f / r2;
    const float inv6 = inv2 * inv2 * inv2;
    const float fmag = 24.0f * inv2 * inv6 * (2.0f * inv6 - 1.0f);
    *energy += 2.0f * inv6 * (inv6 - 1.0f);  // 4*(...)/2: each pair is visited twice
    return make_float3(fmag * dx, fmag * dy, fmag * dz);
}

__global__ void computeForces(const float3* __restrict__ pos, float3* __restrict__ force, float* __restrict__ potential, int n) {
    __shared__ float3 tile[TILE];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float3 pi = (i < n) ? pos[i] : make_float3(0.0f, 0.0f, 0.0f);
    float3 f = make_float3(0.0f, 0.0f, 0.0f);
    float e = 0.0f;

    for (int base = 0; base < n; base += TILE) {
        const int j = base + threadIdx.x;
        tile[threadIdx.x] = (j < n) ? pos[j] : make_float3(1e6f, 1e6f, 1e6f);
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            if (base + k >= n) break;
            const float3 df = ljPair(pi, tile[k], &e);
            f.x += df.x;
            f.y += df.y;
            f.z += df.z;
        }
        __syncthreads();
    }
    if (i < n) {
        force[i] = f;
        potential[i] = e;
    }
}

// First half of velocity Verlet: v += a*dt/2, x += v*dt.
__global__ void halfKickDrift(float3* pos, float3* vel, const float3* force, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float3 v = vel[i];
    v.x += 0.5f * DT * force[i].x;
    v.y += 0.5f * DT * force[i].y;
    v.z += 0.5f * DT * force[i].z;
    pos[i].x += DT * v.x;
    pos[i].y += DT * v.y;
    pos[i].z += DT * v.z;
    vel[i] = v;
}

// Second half: v += a*dt/2 with the new forces.
__global__ void halfKick(float3* vel, const float3* force, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    vel[i].x += 0.5f * DT * force[i].x;
    vel[i].y += 0.5f * DT * force[i].y;
    vel[i].z += 0.5f * DT * force[i].z;
}

static double totalEnergy(const float3* vel, const float* pot, int n, double* kinetic) {
    double ke = 0.0, pe = 0.0;
    for (int i = 0; i < n; ++i) {
        ke += 0.5 * ((double)vel[i].x * vel[i].x + (double)vel[i].y * vel[i].y + (double)vel[i].z * vel[i].z);
        pe += pot[i];
    }
    *kinetic = ke;
    return ke + pe;
}

int main() {
    float3 hPos[NUM_PARTICLES], hVel[NUM_PARTICLES];
    float hPot[NUM_PARTICLES];
    // 8 x 8 x 4 simple cubic lattice near the potential minimum.
    const float spacing = 1.15f;
    for (int i = 0; i < NUM_PARTICLES; ++i) {
        const int x = i % 8, y = (i / 8) % 8, z = i / 64;
        hPos[i] = make_float3(x * spacing, y * spacing, z * spacing);
        // Small deterministic velocities with zero total momentum per pair.
        const float s = (i % 2 == 0) ? 1.0f : -1.0f;
        hVel[i] = make_float3(s * 0.05f * ((i / 2) % 5 - 2), s * 0.03f * ((i / 2) % 3 - 1), s * 0.02f);
    }

    float3 *dPos, *dVel, *dForce;
    float* dPot;
    CUDA_CHECK(cudaMalloc(&dPos, sizeof(hPos)));
    CUDA_CHECK(cudaMalloc(&dVel, sizeof(hVel)));
    CUDA_CHECK(cudaMalloc(&dForce, sizeof(hPos)));
    CUDA_CHECK(cudaMalloc(&dPot, sizeof(hPot)));
    CUDA_CHECK(cudaMemcpy(dPos, hPos, sizeof(hPos), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dVel, hVel, sizeof(hVel), cudaMemcpyHostToDevice));

    const int threads = TILE, blocks = (NUM_PARTICLES + threads - 1) / threads;
    computeForces<<<blocks, threads>>>(dPos, dForce, dPot, NUM_PARTICLES);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hPot, dPot, sizeof(hPot), cudaMemcpyDeviceToHost));
    double ke0;
    const double e0 = totalEnergy(hVel, hPot, NUM_PARTICLES, &ke0);

    for (int step = 0; step < STEPS; ++step) {
        halfKickDrift<<<blocks, threads>>>(dPos, dVel, dForce, NUM_PARTICLES);
        computeForces<<<blocks, threads>>>(dPos, dForce, dPot, NUM_PARTICLES);
        halfKick<<<blocks, threads>>>(dVel, dForce, NUM_PARTICLES);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hPos, dPos, sizeof(hPos), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hVel, dVel, sizeof(hVel), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hPot, dPot, sizeof(hPot), cudaMemcpyDeviceToHost));
    double ke1;
    const double e1 = totalEnergy(hVel, hPot, NUM_PARTICLES, &ke1);
    const double drift = fabs(e1 - e0) / fabs(e0);

    printf("particles=%d steps=%d dt=%.3f\n", NUM_PARTICLES, STEPS, DT);
    printf("initial energy=%.1f kinetic=%.3f\n", e0, ke0);
    printf("final energy=%.1f kinetic=%.1f\n", e1, ke1);
    printf("particle 0 at (%.2f, %.2f, %.2f)\n", hPos[0].x, hPos[0].y, hPos[0].z);
    printf("relative energy drift < 1e-3: %s\n", drift < 1e-3 ? "yes" : "no");

    cudaFree(dPos);
    cudaFree(dVel);
    cudaFree(dForce);
    cudaFree(dPot);
    return drift < 1e-3 ? 0 : 1;
}
