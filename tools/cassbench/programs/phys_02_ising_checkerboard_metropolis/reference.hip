// HIP port of phys_02_ising_checkerboard_metropolis/program.cu (cassbench reference translation).
//
// 2D Ising model on a 128x128 periodic lattice, Metropolis updates in
// checkerboard order (all black sites, then all white sites, so neighbours
// never update together). Random numbers come from a counter-based hash of
// (site, sweep, colour), and the acceptance test compares them with integer
// thresholds floor(2^32 exp(-beta dE)) kept in constant memory, so the
// trajectory is exact integer arithmetic and the CPU replays it bit for
// bit. A second kernel measures magnetisation and energy with a shared
// memory tree reduction and one atomicAdd per block.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <hip/hip_runtime.h>

#define HIP_CHECK(call)                                                                  \
    do {                                                                                 \
        hipError_t e_ = (call);                                                          \
        if (e_ != hipSuccess) {                                                          \
            fprintf(stderr, "%s at %s:%d\n", hipGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

const int L = 128;
const int SWEEPS = 400;
const int REPORT = 100;
const double TEMPERATURE = 2.1;  // below T_c = 2.269: the lattice orders
const int BX = 16, BY = 16;

__constant__ unsigned c_accept[2];  // thresholds for dE = 4 and dE = 8

__host__ __device__ inline unsigned hashSite(unsigned site, unsigned sweep, unsigned color) {
    unsigned h = site * 0x9E3779B1u ^ (sweep * 0x85EBCA77u + color * 0xC2B2AE3Du);
    h ^= h >> 16;
    h *= 0x7FEB352Du;
    h ^= h >> 15;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    return h;
}

__host__ __device__ inline int neighbourSum(const signed char* s, int x, int y) {
    return s[y * L + (x + 1) % L] + s[y * L + (x + L - 1) % L] + s[((y + 1) % L) * L + x] + s[((y + L - 1) % L) * L + x];
}

__global__ void metropolisColor(signed char* spins, int color, unsigned sweep) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= L || y >= L || ((x + y) & 1) != color) return;
    const int s = spins[y * L + x];
    const int dE = 2 * s * neighbourSum(spins, x, y);  // in units of J: 0, +-4, +-8
    if (dE <= 0 || hashSite(y * L + x, sweep, color) < c_accept[dE / 4 - 1]) spins[y * L + x] = (signed char)-s;
}

__global__ void measure(const signed char* spins, int* totals) {
    __shared__ int mag[BX * BY], bond[BX * BY];
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    const int s = spins[y * L + x];
    mag[t] = s;
    bond[t] = -s * (spins[y * L + (x + 1) % L] + spins[((y + 1) % L) * L + x]);  // each bond once
    __syncthreads();
    for (int stride = BX * BY / 2; stride > 0; stride >>= 1) {
        if (t < stride) {
            mag[t] += mag[t + stride];
            bond[t] += bond[t + stride];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(&totals[0], mag[0]);
        atomicAdd(&totals[1], bond[0]);
    }
}

int main() {
    const double beta = 1.0 / TEMPERATURE;
    const unsigned accept[2] = {(unsigned)std::floor(4294967296.0 * std::exp(-4.0 * beta)),
                                (unsigned)std::floor(4294967296.0 * std::exp(-8.0 * beta))};
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_accept), accept, sizeof(accept)));
    std::vector<signed char> spins(L * L), ref(L * L);
    for (int i = 0; i < L * L; ++i) spins[i] = (hashSite(i, 0xFFFFu, 7u) >> 31) ? 1 : -1;  // hot start
    ref = spins;

    signed char* dSpins;
    int* dTotals;
    HIP_CHECK(hipMalloc(&dSpins, L * L));
    HIP_CHECK(hipMalloc(&dTotals, 2 * sizeof(int)));
    HIP_CHECK(hipMemcpy(dSpins, spins.data(), L * L, hipMemcpyHostToDevice));
    const dim3 block(BX, BY), grid(L / BX, L / BY);
    printf("lattice=%dx%d T=%.2f thresholds=%u %u\n", L, L, TEMPERATURE, accept[0], accept[1]);
    bool ok = true;
    for (int sweep = 1; sweep <= SWEEPS; ++sweep) {
        for (int color = 0; color < 2; ++color) {
            metropolisColor<<<grid, block>>>(dSpins, color, sweep);
            HIP_CHECK(hipGetLastError());
            for (int y = 0; y < L; ++y)  // CPU replay of the same half sweep
                for (int x = (y + color) & 1; x < L; x += 2) {
                    const int s = ref[y * L + x];
                    const int dE = 2 * s * neighbourSum(ref.data(), x, y);
                    if (dE <= 0 || hashSite(y * L + x, sweep, color) < accept[dE / 4 - 1]) ref[y * L + x] = (signed char)-s;
                }
        }
        if (sweep % REPORT == 0) {
            int totals[2];
            HIP_CHECK(hipMemset(dTotals, 0, 2 * sizeof(int)));
            measure<<<grid, block>>>(dSpins, dTotals);
            HIP_CHECK(hipGetLastError());
            HIP_CHECK(hipMemcpy(totals, dTotals, sizeof(totals), hipMemcpyDeviceToHost));
            HIP_CHECK(hipMemcpy(spins.data(), dSpins, L * L, hipMemcpyDeviceToHost));
            int same = 0;
            for (int i = 0; i < L * L; ++i) same += spins[i] == ref[i];
            ok = ok && same == L * L;
            printf("sweep %d: magnetisation=%d energy=%d (per site %.4f) sites matching CPU=%d\n", sweep, totals[0],
                   totals[1], (double)totals[1] / (L * L), same);
        }
    }
    unsigned checksum = 0;
    for (int i = 0; i < L * L; ++i) checksum = checksum * 3u + (unsigned)(spins[i] + 1);
    printf("final lattice checksum=%08x\n", checksum);
    printf("CPU replay: %s\n", ok ? "PASS" : "FAIL");
    HIP_CHECK(hipFree(dSpins));
    HIP_CHECK(hipFree(dTotals));
    return ok ? 0 : 1;
}
