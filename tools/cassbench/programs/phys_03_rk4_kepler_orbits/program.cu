// Classical fourth-order Runge-Kutta integration of 512 independent Kepler
// orbits (test particles around a unit central mass, semi-major axes 1 to 2,
// eccentricities 0 to 0.7) in double precision, one thread per orbit in a
// grid-stride loop, 5000 steps each. The step function is shared by host
// and device (__host__ __device__). Each thread measures the relative drift
// of its energy and angular momentum; the block maxima are reduced in shared
// memory and merged with a 64-bit atomicMax on the bit pattern of the
// (non-negative) double. The host integrates every orbit again to compare.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                               \
    do {                                                                               \
        cudaError_t err = (call);                                                      \
        if (err != cudaSuccess) {                                                      \
            fprintf(stderr, "CUDA error: %s (%s line %d)\n", cudaGetErrorString(err),  \
                    __FILE__, __LINE__);                                               \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

const int ORBITS = 512;
const int STEPS = 5000;
const double DT = 0.004;
const int THREADS = 128;

struct State {
    double x, y, vx, vy;
};

__host__ __device__ inline State derivative(const State& s) {
    const double r2 = s.x * s.x + s.y * s.y;
    const double inv = 1.0 / (r2 * sqrt(r2));
    State d = {s.vx, s.vy, -s.x * inv, -s.y * inv};
    return d;
}

__host__ __device__ inline State axpy(const State& s, const State& d, double h) {
    State r = {s.x + h * d.x, s.y + h * d.y, s.vx + h * d.vx, s.vy + h * d.vy};
    return r;
}

__host__ __device__ inline State rk4Step(const State& s, double h) {
    const State k1 = derivative(s);
    const State k2 = derivative(axpy(s, k1, 0.5 * h));
    const State k3 = derivative(axpy(s, k2, 0.5 * h));
    const State k4 = derivative(axpy(s, k3, h));
    State r;
    r.x = s.x + h / 6.0 * (k1.x + 2.0 * k2.x + 2.0 * k3.x + k4.x);
    r.y = s.y + h / 6.0 * (k1.y + 2.0 * k2.y + 2.0 * k3.y + k4.y);
    r.vx = s.vx + h / 6.0 * (k1.vx + 2.0 * k2.vx + 2.0 * k3.vx + k4.vx);
    r.vy = s.vy + h / 6.0 * (k1.vy + 2.0 * k2.vy + 2.0 * k3.vy + k4.vy);
    return r;
}

__host__ __device__ inline double energy(const State& s) {
    return 0.5 * (s.vx * s.vx + s.vy * s.vy) - 1.0 / sqrt(s.x * s.x + s.y * s.y);
}
__host__ __device__ inline double angularMomentum(const State& s) { return s.x * s.vy - s.y * s.vx; }

__global__ void integrateOrbits(State* states, int n, unsigned long long* maxDrift) {
    __shared__ double eDrift[THREADS], lDrift[THREADS];
    double myE = 0.0, myL = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        State s = states[i];
        const double e0 = energy(s), l0 = angularMomentum(s);
        for (int step = 0; step < STEPS; ++step) s = rk4Step(s, DT);
        states[i] = s;
        myE = fmax(myE, fabs((energy(s) - e0) / e0));
        myL = fmax(myL, fabs((angularMomentum(s) - l0) / l0));
    }
    eDrift[threadIdx.x] = myE;
    lDrift[threadIdx.x] = myL;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            eDrift[threadIdx.x] = fmax(eDrift[threadIdx.x], eDrift[threadIdx.x + stride]);
            lDrift[threadIdx.x] = fmax(lDrift[threadIdx.x], lDrift[threadIdx.x + stride]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {  // non-negative doubles order like their bit patterns
        atomicMax(&maxDrift[0], (unsigned long long)__double_as_longlong(eDrift[0]));
        atomicMax(&maxDrift[1], (unsigned long long)__double_as_longlong(lDrift[0]));
    }
}

static double bitsToDouble(unsigned long long b) {
    double d;
    memcpy(&d, &b, sizeof(d));
    return d;
}

int main() {
    std::vector<State> init(ORBITS), gpu(ORBITS);
    for (int i = 0; i < ORBITS; ++i) {  // start at pericentre on the x axis
        const double a = 1.0 + (double)(i % 32) / 31.0;
        const double e = 0.7 * (double)(i / 32) / 15.0;
        const double rp = a * (1.0 - e);
        const State s = {rp, 0.0, 0.0, sqrt((1.0 + e) / rp)};
        init[i] = s;
    }
    State* dStates;
    unsigned long long* dDrift;
    CUDA_CHECK(cudaMalloc(&dStates, ORBITS * sizeof(State)));
    CUDA_CHECK(cudaMalloc(&dDrift, 2 * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(dStates, init.data(), ORBITS * sizeof(State), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dDrift, 0, 2 * sizeof(unsigned long long)));
    integrateOrbits<<<2, THREADS>>>(dStates, ORBITS, dDrift);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned long long drift[2];
    CUDA_CHECK(cudaMemcpy(gpu.data(), dStates, ORBITS * sizeof(State), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(drift, dDrift, sizeof(drift), cudaMemcpyDeviceToHost));

    double maxPosErr = 0.0, refE = 0.0;
    int worst = 0;
    for (int i = 0; i < ORBITS; ++i) {
        State s = init[i];
        for (int step = 0; step < STEPS; ++step) s = rk4Step(s, DT);
        maxPosErr = fmax(maxPosErr, fmax(fabs(s.x - gpu[i].x), fabs(s.y - gpu[i].y)));
        const double d = fabs((energy(s) - energy(init[i])) / energy(init[i]));
        if (d > refE) refE = d, worst = i;
    }
    const double gpuE = bitsToDouble(drift[0]), gpuL = bitsToDouble(drift[1]);
    const bool ok = maxPosErr < 1e-9 && fabs(gpuE - refE) <= 1e-6 * refE;
    printf("orbits=%d steps=%d dt=%.3f (t=%.1f)\n", ORBITS, STEPS, DT, STEPS * DT);
    printf("orbit 0 (a=1, e=0): x=%.6f y=%.6f\n", gpu[0].x, gpu[0].y);
    printf("orbit %d (a=2, e=0.7): x=%.6f y=%.6f\n", ORBITS - 1, gpu[ORBITS - 1].x, gpu[ORBITS - 1].y);
    printf("max relative energy drift=%.3e (orbit %d) angular momentum drift=%.3e\n", gpuE, worst, gpuL);
    printf("max |x_gpu - x_cpu| < 1e-9: %s\n", ok ? "PASS" : "FAIL");
    fprintf(stderr, "max position difference %.3e\n", maxPosErr);
    CUDA_CHECK(cudaFree(dStates));
    CUDA_CHECK(cudaFree(dDrift));
    return ok ? 0 : 1;
}
