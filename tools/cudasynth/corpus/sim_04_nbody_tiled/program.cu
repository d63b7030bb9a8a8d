// N-body simulation of 1024 particles using the brute-force (all pairs)
// algorithm, optimized for shared memory tiling: each block loads
// blockDim.x bodies at a time into dynamically sized shared memory and every
// thread accumulates the accelerations of its body from the tile, so global
// memory traffic drops by a factor of the block size. Plummer softening
// avoids singularities; kick-drift-kick leapfrog integration. Kernel time is
// measured with events and printed to stderr.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t e = (call);                                                 \
        if (e != cudaSuccess) {                                                 \
            fprintf(stderr, "CUDA error: %s at %s:%d\n", cudaGetErrorString(e), \
                    __FILE__, __LINE__);                                        \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

#define N_BODIES 1024
#define BLOCK 128
#define SOFTENING2 0.01f
#define DT 0.005f
#define STEPS 20

__global__ void computeAccel(const float4* __restrict__ posMass, float3* __restrict__ accel, int n) {
    extern __shared__ float4 tile[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4 pi = (i < n) ? posMass[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float3 a = make_float3(0.0f, 0.0f, 0.0f);

    for (int base = 0; base < n; base += blockDim.x) {
        const int j = base + threadIdx.x;
        tile[threadIdx.x] = (j < n) ? posMass[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // mass 0: no force
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < blockDim.x; ++k) {
            const float4 pj = tile[k];
            const float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
            const float dist2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
            const float invDist = 1.0f / sqrtf(dist2);
            const float s = pj.w * invDist * invDist * invDist;
            a.x += dx * s;
            a.y += dy * s;
            a.z += dz * s;
        }
        __syncthreads();
    }
    if (i < n) accel[i] = a;
}

__global__ void kick(float3* vel, const float3* accel, int n, float dt) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        vel[i].x += accel[i].x * dt;
        vel[i].y += accel[i].y * dt;
        vel[i].z += accel[i].z * dt;
    }
}

__global__ void drift(float4* posMass, const float3* vel, int n, float dt) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        posMass[i].x += vel[i].x * dt;
        posMass[i].y += vel[i].y * dt;
        posMass[i].z += vel[i].z * dt;
    }
}

int main() {
    float4* hPos = (float4*)malloc(N_BODIES * sizeof(float4));
    float3* hVel = (float3*)malloc(N_BODIES * sizeof(float3));
    // Bodies on a jittered lattice in a cube of side 2, at rest, equal masses.
    for (int i = 0; i < N_BODIES; ++i) {
        const int x = i % 16, y = (i / 16) % 8, z = i / 128;
        const float jx = (float)((i * 37) % 11) / 110.0f, jy = (float)((i * 53) % 13) / 130.0f;
        hPos[i] = make_float4(-1.0f + x * 0.125f + jx, -1.0f + y * 0.25f + jy, -1.0f + z * 0.25f, 1.0f / N_BODIES);
        hVel[i] = make_float3(0.0f, 0.0f, 0.0f);
    }

    float4* dPos;
    float3 *dVel, *dAcc;
    CUDA_CHECK(cudaMalloc(&dPos, N_BODIES * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&dVel, N_BODIES * sizeof(float3)));
    CUDA_CHECK(cudaMalloc(&dAcc, N_BODIES * sizeof(float3)));
    CUDA_CHECK(cudaMemcpy(dPos, hPos, N_BODIES * sizeof(float4), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dVel, hVel, N_BODIES * sizeof(float3), cudaMemcpyHostToDevice));

    const int blocks = (N_BODIES + BLOCK - 1) / BLOCK;
    const size_t shmem = BLOCK * sizeof(float4);
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));

    computeAccel<<<blocks, BLOCK, shmem>>>(dPos, dAcc, N_BODIES);
    for (int step = 0; step < STEPS; ++step) {
        kick<<<blocks, BLOCK>>>(dVel, dAcc, N_BODIES, 0.5f * DT);
        drift<<<blocks, BLOCK>>>(dPos, dVel, N_BODIES, DT);
        computeAccel<<<blocks, BLOCK, shmem>>>(dPos, dAcc, N_BODIES);
        kick<<<blocks, BLOCK>>>(dVel, dAcc, N_BODIES, 0.5f * DT);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    fprintf(stderr, "%d steps: %.3f ms (%.1f Ginteractions/s)\n", STEPS, ms,
            (double)N_BODIES * N_BODIES * (STEPS + 1) / (ms * 1e6));

    CUDA_CHECK(cudaMemcpy(hPos, dPos, N_BODIES * sizeof(float4), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hVel, dVel, N_BODIES * sizeof(float3), cudaMemcpyDeviceToHost));

    double ke = 0.0, cx = 0.0, cy = 0.0, cz = 0.0, rms = 0.0;
    for (int i = 0; i < N_BODIES; ++i) {
        const double m = hPos[i].w;
        ke += 0.5 * m * ((double)hVel[i].x * hVel[i].x + (double)hVel[i].y * hVel[i].y + (double)hVel[i].z * hVel[i].z);
        cx += m * hPos[i].x;
        cy += m * hPos[i].y;
        cz += m * hPos[i].z;
    }
    for (int i = 0; i < N_BODIES; ++i) {
        const double dx = hPos[i].x - cx, dy = hPos[i].y - cy, dz = hPos[i].z - cz;
        rms += (dx * dx + dy * dy + dz * dz) / N_BODIES;
    }
    printf("bodies=%d steps=%d dt=%.3f\n", N_BODIES, STEPS, DT);
    printf("kinetic energy=%.4f\n", ke);
    printf("center of mass=(%.3f, %.3f, %.3f)\n", cx, cy, cz);
    printf("rms radius=%.4f\n", sqrt(rms));
    printf("body 0 position=(%.3f, %.3f, %.3f)\n", hPos[0].x, hPos[0].y, hPos[0].z);

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    cudaFree(dPos);
    cudaFree(dVel);
    cudaFree(dAcc);
    free(hPos);
    free(hVel);
    return 0;
}
