// HIP port of phys_01_lbm_d2q9_taylor_green/program.cu (cassbench reference translation).
//
// Lattice Boltzmann (D2Q9, BGK collision) simulation of a decaying
// Taylor-Green vortex on a 64x64 periodic grid. One fused kernel per step
// pulls the nine populations from the upwind neighbours, computes density
// and velocity, and relaxes towards equilibrium (the rest population takes
// what the eight moving ones leave of the density, so that rounding of the
// weights cannot create mass); lattice velocities and weights sit in
// constant memory, populations in structure-of-arrays
// layout, and a 2D grid covers the lattice. The host measures the kinetic
// energy decay (its rate gives the fluid viscosity, (tau - 1/2)/3 in
// theory) and reruns the same scheme on the CPU to check the fields.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <hip/hip_runtime.h>

#define HIP_CHECK(x)                                                                         \
    do {                                                                                     \
        hipError_t st = (x);                                                                 \
        if (st != hipSuccess) {                                                              \
            fprintf(stderr, "HIP: %s (%s:%d)\n", hipGetErrorString(st), __FILE__, __LINE__); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

const int NX = 64, NY = 64, Q = 9, CELLS = NX * NY;
const int STEPS = 400, REPORT = 100;
const float TAU = 0.8f;
const float U0 = 0.04f;

__constant__ int c_cx[Q];
__constant__ int c_cy[Q];
__constant__ float c_w[Q];
const int h_cx[Q] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
const int h_cy[Q] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
const float h_w[Q] = {4.f / 9, 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 36, 1.f / 36, 1.f / 36, 1.f / 36};

// equilibria fills feq[0..Q) for one cell from the lattice constants
// (constant memory on the device, host arrays on the host).
__host__ __device__ inline void equilibria(const int* cx, const int* cy, const float* w, float rho, float ux, float uy,
                                           float* feq) {
    const float usq = 1.5f * (ux * ux + uy * uy);
    float moving = 0.0f;
    for (int i = 1; i < Q; ++i) {
        const float cu = 3.0f * (cx[i] * ux + cy[i] * uy);
        feq[i] = w[i] * rho * (1.0f + cu + 0.5f * cu * cu - usq);
        moving += feq[i];
    }
    feq[0] = rho - moving;
}

__global__ void streamCollide(const float* __restrict__ fin, float* __restrict__ fout, float omega) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= NX || y >= NY) return;
    float f[Q], rho = 0.0f, ux = 0.0f, uy = 0.0f;
    for (int i = 0; i < Q; ++i) {
        const int xs = (x - c_cx[i] + NX) % NX, ys = (y - c_cy[i] + NY) % NY;
        f[i] = fin[i * CELLS + ys * NX + xs];
        rho += f[i];
        ux += c_cx[i] * f[i];
        uy += c_cy[i] * f[i];
    }
    ux /= rho;
    uy /= rho;
    float feq[Q];
    equilibria(c_cx, c_cy, c_w, rho, ux, uy, feq);
    for (int i = 0; i < Q; ++i) fout[i * CELLS + y * NX + x] = f[i] + omega * (feq[i] - f[i]);
}

// Host side: density, kinetic energy and the largest speed of a population set.
static void moments(const std::vector<float>& f, double* mass, double* energy, double* maxSpeed) {
    *mass = *energy = *maxSpeed = 0.0;
    for (int c = 0; c < CELLS; ++c) {
        double rho = 0, ux = 0, uy = 0;
        for (int i = 0; i < Q; ++i) {
            rho += f[i * CELLS + c];
            ux += h_cx[i] * (double)f[i * CELLS + c];
            uy += h_cy[i] * (double)f[i * CELLS + c];
        }
        ux /= rho, uy /= rho;
        *mass += rho;
        *energy += 0.5 * rho * (ux * ux + uy * uy);
        *maxSpeed = std::fmax(*maxSpeed, std::sqrt(ux * ux + uy * uy));
    }
}

int main() {
    const double k = 2.0 * M_PI / NX;
    std::vector<float> f(Q * CELLS), ref;
    for (int y = 0; y < NY; ++y)
        for (int x = 0; x < NX; ++x) {
            const float ux = (float)(-U0 * std::cos(k * x) * std::sin(k * y));
            const float uy = (float)(U0 * std::sin(k * x) * std::cos(k * y));
            const float rho = (float)(1.0 - 0.75 * U0 * U0 * (std::cos(2 * k * x) + std::cos(2 * k * y)));
            float feq[Q];
            equilibria(h_cx, h_cy, h_w, rho, ux, uy, feq);
            for (int i = 0; i < Q; ++i) f[i * CELLS + y * NX + x] = feq[i];
        }
    ref = f;
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_cx), h_cx, sizeof(h_cx)));
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_cy), h_cy, sizeof(h_cy)));
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_w), h_w, sizeof(h_w)));
    float *dA, *dB;
    HIP_CHECK(hipMalloc(&dA, Q * CELLS * sizeof(float)));
    HIP_CHECK(hipMalloc(&dB, Q * CELLS * sizeof(float)));
    HIP_CHECK(hipMemcpy(dA, f.data(), Q * CELLS * sizeof(float), hipMemcpyHostToDevice));

    const float omega = 1.0f / TAU;
    const dim3 block(16, 8), grid(NX / 16, NY / 8);
    double mass0, energy0, speed;
    moments(f, &mass0, &energy0, &speed);
    printf("grid=%dx%d tau=%.2f theoretical viscosity=%.4f\n", NX, NY, TAU, (TAU - 0.5) / 3.0);
    printf("step 0: mass=%.2f energy=%.6e max speed=%.5f\n", mass0, energy0, speed);
    double energy = energy0;
    for (int step = 1; step <= STEPS; ++step) {
        streamCollide<<<grid, block>>>(dA, dB, omega);
        HIP_CHECK(hipGetLastError());
        std::swap(dA, dB);
        if (step % REPORT == 0) {
            double mass;
            HIP_CHECK(hipMemcpy(f.data(), dA, Q * CELLS * sizeof(float), hipMemcpyDeviceToHost));
            moments(f, &mass, &energy, &speed);
            printf("step %d: mass=%.2f energy ratio=%.4f max speed=%.5f\n", step, mass, energy / energy0, speed);
            fprintf(stderr, "step %d: mass %.6f energy ratio %.8f\n", step, mass, energy / energy0);
        }
    }
    const double nu = -std::log(energy / energy0) / (4.0 * k * k * STEPS);
    printf("measured viscosity=%.4f\n", nu);

    // CPU reference: the same pull scheme in float.
    std::vector<float> next(Q * CELLS);
    for (int step = 0; step < STEPS; ++step) {
        for (int y = 0; y < NY; ++y)
            for (int x = 0; x < NX; ++x) {
                float fl[Q], rho = 0.0f, ux = 0.0f, uy = 0.0f;
                for (int i = 0; i < Q; ++i) {
                    fl[i] = ref[i * CELLS + ((y - h_cy[i] + NY) % NY) * NX + (x - h_cx[i] + NX) % NX];
                    rho += fl[i];
                    ux += h_cx[i] * fl[i];
                    uy += h_cy[i] * fl[i];
                }
                ux /= rho;
                uy /= rho;
                float feq[Q];
                equilibria(h_cx, h_cy, h_w, rho, ux, uy, feq);
                for (int i = 0; i < Q; ++i) next[i * CELLS + y * NX + x] = fl[i] + omega * (feq[i] - fl[i]);
            }
        ref.swap(next);
    }
    double maxDiff = 0.0;
    for (int i = 0; i < Q * CELLS; ++i) maxDiff = std::fmax(maxDiff, std::fabs((double)ref[i] - f[i]));
    const bool ok = maxDiff < 1e-5;
    printf("max |f_gpu - f_cpu| < 1e-5: %s\n", ok ? "PASS" : "FAIL");
    fprintf(stderr, "max population difference %.3e\n", maxDiff);
    HIP_CHECK(hipFree(dA));
    HIP_CHECK(hipFree(dB));
    return ok ? 0 : 1;
}
