// Unified (managed) memory shared by host and device.
#include <cstdio>
#include <hip/hip_runtime.h>

struct Particle {
    float x, v;
};

__global__ void step(Particle* p, int n, float dt) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i].v += -p[i].x * dt;
        p[i].x += p[i].v * dt;
    }
}

int main() {
    const int n = 4096;
    Particle* p;
    hipMallocManaged(&p, n * sizeof(Particle));
    int* flags;
    hipMallocManaged(&flags, sizeof(int), hipMemAttachGlobal);
    for (int i = 0; i < n; ++i) { p[i].x = (float)(i % 17) * 0.1f; p[i].v = 0.0f; }
    *flags = 0;
    int device = 0;
    hipGetDevice(&device);
    for (int s = 0; s < 10; ++s) step<<<(n + 255) / 256, 256>>>(p, n, 0.01f);
    hipDeviceSynchronize();
    double e = 0;
    for (int i = 0; i < n; ++i) e += p[i].x * p[i].x + p[i].v * p[i].v;
    printf("energy=%.4f flags=%d\n", e, *flags);
    hipFree(p);
    hipFree(flags);
    return 0;
}
