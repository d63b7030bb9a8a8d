#include "hip/hip_runtime.h"
// Work-efficient (Blelloch) exclusive prefix sum of one million ints, then
// stream compaction built on it. Each block scans 2*BLOCK elements in
// dynamic shared memory (up-sweep, clear, down-sweep) with padding against
// bank conflicts and writes its total; a second launch of the same template
// scans the block totals, and a third kernel adds them back. Compaction
// scans the predicate "value == 15" and scatters the selected indices.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <hip/hip_runtime.h>

static void check(hipError_t e, const char* what, int line) {
    if (e != hipSuccess) {
        fprintf(stderr, "line %d: %s: %s\n", line, what, hipGetErrorString(e));
        exit(2);
    }
}
#define CK(x) check((x), #x, __LINE__)

#define LOG_BANKS 5
#define PAD(i) ((i) + ((i) >> LOG_BANKS))

const int N = 1000000;
const int BLOCK = 512;            // threads per block; 2*BLOCK elements per block
const int TILE = 2 * BLOCK;

template <int THREADS>
__global__ void blellochScan(const int* in, int* out, int* blockSums, int n) {
    extern __shared__ int temp[];
    const int tid = threadIdx.x;
    const int base = blockIdx.x * 2 * THREADS;
    const int ai = tid, bi = tid + THREADS;
    temp[PAD(ai)] = base + ai < n ? in[base + ai] : 0;
    temp[PAD(bi)] = base + bi < n ? in[base + bi] : 0;
    int offset = 1;
    for (int d = THREADS; d > 0; d >>= 1) {  // up-sweep: reduction tree
        __syncthreads();
        if (tid < d) {
            const int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
            temp[PAD(b)] += temp[PAD(a)];
        }
        offset <<= 1;
    }
    if (tid == 0) {
        if (blockSums != nullptr) blockSums[blockIdx.x] = temp[PAD(2 * THREADS - 1)];
        temp[PAD(2 * THREADS - 1)] = 0;
    }
    for (int d = 1; d <= THREADS; d <<= 1) {  // down-sweep
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            const int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
            const int t = temp[PAD(a)];
            temp[PAD(a)] = temp[PAD(b)];
            temp[PAD(b)] += t;
        }
    }
    __syncthreads();
    if (base + ai < n) out[base + ai] = temp[PAD(ai)];
    if (base + bi < n) out[base + bi] = temp[PAD(bi)];
}

__global__ void addBlockOffsets(int* data, const int* offsets, int n) {
    const int i = blockIdx.x * TILE + threadIdx.x;
    const int add = offsets[blockIdx.x];
    if (i < n) data[i] += add;
    if (i + BLOCK < n) data[i + BLOCK] += add;
}

__global__ void flagValue(const int* in, int* flags, int n, int wanted) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) flags[i] = in[i] == wanted ? 1 : 0;
}

__global__ void scatterSelected(const int* flags, const int* positions, int* selected, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && flags[i]) selected[positions[i]] = i;
}

// exclusiveScan scans dIn into dOut (two levels: N <= TILE*TILE).
static void exclusiveScan(const int* dIn, int* dOut, int* dSums, int* dSumsScanned, int n) {
    const int blocks = (n + TILE - 1) / TILE;
    const size_t shmem = (PAD(TILE - 1) + 1) * sizeof(int);
    hipLaunchKernelGGL(HIP_KERNEL_NAME(blellochScan<BLOCK>), dim3(blocks), dim3(BLOCK), shmem, 0, dIn, dOut, dSums, n);
    CK(hipGetLastError());
    hipLaunchKernelGGL(HIP_KERNEL_NAME(blellochScan<BLOCK>), dim3(1), dim3(BLOCK), shmem, 0, dSums, dSumsScanned, nullptr, blocks);
    CK(hipGetLastError());
    hipLaunchKernelGGL(addBlockOffsets, dim3(blocks), dim3(BLOCK), 0, 0, dOut, dSumsScanned, n);
    CK(hipGetLastError());
}

int main() {
    std::vector<int> in(N);
    unsigned state = 2463534242u;
    for (int i = 0; i < N; ++i) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        in[i] = (int)(state >> 28);  // 0..15
    }
    const int blocks = (N + TILE - 1) / TILE;
    if (blocks > TILE) {
        fprintf(stderr, "N too large for a two-level scan\n");
        return 1;
    }
    int *dIn, *dOut, *dSums, *dSumsScanned, *dFlags, *dPos, *dSel;
    CK(hipMalloc(&dIn, N * sizeof(int)));
    CK(hipMalloc(&dOut, N * sizeof(int)));
    CK(hipMalloc(&dSums, TILE * sizeof(int)));
    CK(hipMalloc(&dSumsScanned, TILE * sizeof(int)));
    CK(hipMalloc(&dFlags, N * sizeof(int)));
    CK(hipMalloc(&dPos, N * sizeof(int)));
    CK(hipMalloc(&dSel, N * sizeof(int)));
    CK(hipMemcpy(dIn, in.data(), N * sizeof(int), hipMemcpyHostToDevice));

    exclusiveScan(dIn, dOut, dSums, dSumsScanned, N);
    hipLaunchKernelGGL(flagValue, dim3((N + 255) / 256), dim3(256), 0, 0, dIn, dFlags, N, 15);
    CK(hipGetLastError());
    exclusiveScan(dFlags, dPos, dSums, dSumsScanned, N);
    hipLaunchKernelGGL(scatterSelected, dim3((N + 255) / 256), dim3(256), 0, 0, dFlags, dPos, dSel, N);
    CK(hipGetLastError());
    CK(hipDeviceSynchronize());

    std::vector<int> out(N), pos(N);
    CK(hipMemcpy(out.data(), dOut, N * sizeof(int), hipMemcpyDeviceToHost));
    CK(hipMemcpy(pos.data(), dPos, N * sizeof(int), hipMemcpyDeviceToHost));
    const int selectedCount = pos[N - 1] + (in[N - 1] == 15 ? 1 : 0);
    std::vector<int> sel(selectedCount);
    CK(hipMemcpy(sel.data(), dSel, selectedCount * sizeof(int), hipMemcpyDeviceToHost));

    // CPU reference.
    int running = 0, bad = 0;
    unsigned checksum = 0;
    std::vector<int> refSel;
    for (int i = 0; i < N; ++i) {
        if (out[i] != running) ++bad;
        checksum = checksum * 31u + (unsigned)out[i];
        running += in[i];
        if (in[i] == 15) refSel.push_back(i);
    }
    if ((int)refSel.size() != selectedCount) ++bad;
    long long selSum = 0;
    for (int k = 0; k < selectedCount && k < (int)refSel.size(); ++k) {
        if (sel[k] != refSel[k]) ++bad;
        selSum += sel[k];
    }
    printf("n=%d blocks=%d tile=%d\n", N, blocks, TILE);
    printf("total=%d scan[1]=%d scan[123456]=%d scan[n-1]=%d\n", running, out[1], out[123456], out[N - 1]);
    printf("scan checksum=%08x\n", checksum);
    printf("selected (value 15)=%d first=%d last=%d index sum=%lld\n", selectedCount, sel[0],
           sel[selectedCount - 1], selSum);
    printf("mismatches=%d\n", bad);

    CK(hipFree(dIn)); CK(hipFree(dOut)); CK(hipFree(dSums)); CK(hipFree(dSumsScanned));
    CK(hipFree(dFlags)); CK(hipFree(dPos)); CK(hipFree(dSel));
    return bad == 0 ? 0 : 1;
}
