// Blelloch (work-efficient) exclusive scan + stream compaction, HIP version.
//
// Ported by hand from the CUDA sample: same algorithm (two-level scan,
// 2*BLOCK elements per block, padded LDS indices), HIP runtime calls,
// HIP_DYNAMIC_SHARED for the scan buffer, and launches kept as <<< >>>.
// The padding assumes 32 LDS banks, true on RDNA and NVIDIA alike.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define HIPCHECK(x)                                                                   \
  do {                                                                                \
    hipError_t err__ = (x);                                                           \
    if (err__ != hipSuccess) {                                                        \
      fprintf(stderr, "line %d: %s: %s\n", __LINE__, #x, hipGetErrorString(err__)); \
      exit(2);                                                                        \
    }                                                                                 \
  } while (0)

#define LOG_NUM_BANKS 5
#define CONFLICT_FREE(i) ((i) + ((i) >> LOG_NUM_BANKS))

static const int N = 1000000;
static const int BLOCK = 512;
static const int TILE = 2 * BLOCK;

template <int THREADS>
__global__ void blellochScan(const int* in, int* out, int* blockSums, int n) {
  HIP_DYNAMIC_SHARED(int, lds)
  const int t = threadIdx.x;
  const int base = blockIdx.x * 2 * THREADS;
  lds[CONFLICT_FREE(t)] = (base + t < n) ? in[base + t] : 0;
  lds[CONFLICT_FREE(t + THREADS)] = (base + t + THREADS < n) ? in[base + t + THREADS] : 0;

  int stride = 1;
  int active = THREADS;
  while (active > 0) {  // up-sweep
    __syncthreads();
    if (t < active) {
      int left = stride * (2 * t + 1) - 1;
      int right = left + stride;
      lds[CONFLICT_FREE(right)] += lds[CONFLICT_FREE(left)];
    }
    stride *= 2;
    active /= 2;
  }
  if (t == 0) {
    const int last = CONFLICT_FREE(2 * THREADS - 1);
    if (blockSums) blockSums[blockIdx.x] = lds[last];
    lds[last] = 0;
  }
  active = 1;
  while (active <= THREADS) {  // down-sweep
    stride /= 2;
    __syncthreads();
    if (t < active) {
      int left = stride * (2 * t + 1) - 1;
      int right = left + stride;
      int keep = lds[CONFLICT_FREE(left)];
      lds[CONFLICT_FREE(left)] = lds[CONFLICT_FREE(right)];
      lds[CONFLICT_FREE(right)] += keep;
    }
    active *= 2;
  }
  __syncthreads();
  if (base + t < n) out[base + t] = lds[CONFLICT_FREE(t)];
  if (base + t + THREADS < n) out[base + t + THREADS] = lds[CONFLICT_FREE(t + THREADS)];
}

__global__ void addBlockOffsets(int* data, const int* offsets, int n) {
  const int i = blockIdx.x * TILE + threadIdx.x;
  const int add = offsets[blockIdx.x];
  if (i < n) data[i] += add;
  if (i + BLOCK < n) data[i + BLOCK] += add;
}

__global__ void flagValue(const int* in, int* flags, int n, int wanted) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) flags[i] = (in[i] == wanted);
}

__global__ void scatterSelected(const int* flags, const int* positions, int* selected, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && flags[i] != 0) selected[positions[i]] = i;
}

static void exclusiveScan(const int* dIn, int* dOut, int* dSums, int* dSumsScanned, int n) {
  const int blocks = (n + TILE - 1) / TILE;
  const size_t lds = (CONFLICT_FREE(TILE - 1) + 1) * sizeof(int);
  blellochScan<BLOCK><<<dim3(blocks), dim3(BLOCK), lds, 0>>>(dIn, dOut, dSums, n);
  HIPCHECK(hipGetLastError());
  blellochScan<BLOCK><<<dim3(1), dim3(BLOCK), lds, 0>>>(dSums, dSumsScanned, nullptr, blocks);
  HIPCHECK(hipGetLastError());
  addBlockOffsets<<<blocks, BLOCK>>>(dOut, dSumsScanned, n);
  HIPCHECK(hipGetLastError());
}

int main() {
  std::vector<int> in(N);
  unsigned state = 2463534242u;
  for (int i = 0; i < N; ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    in[i] = static_cast<int>(state >> 28);
  }
  const int blocks = (N + TILE - 1) / TILE;
  if (blocks > TILE) {
    fprintf(stderr, "N too large for a two-level scan\n");
    return 1;
  }
  int *dIn, *dOut, *dSums, *dSumsScanned, *dFlags, *dPos, *dSel;
  HIPCHECK(hipMalloc(reinterpret_cast<void**>(&dIn), N * sizeof(int)));
  HIPCHECK(hipMalloc(reinterpret_cast<void**>(&dOut), N * sizeof(int)));
  HIPCHECK(hipMalloc(reinterpret_cast<void**>(&dSums), TILE * sizeof(int)));
  HIPCHECK(hipMalloc(reinterpret_cast<void**>(&dSumsScanned), TILE * sizeof(int)));
  HIPCHECK(hipMalloc(reinterpret_cast<void**>(&dFlags), N * sizeof(int)));
  HIPCHECK(hipMalloc(reinterpret_cast<void**>(&dPos), N * sizeof(int)));
  HIPCHECK(hipMalloc(reinterpret_cast<void**>(&dSel), N * sizeof(int)));
  HIPCHECK(hipMemcpy(dIn, in.data(), N * sizeof(int), hipMemcpyHostToDevice));

  exclusiveScan(dIn, dOut, dSums, dSumsScanned, N);
  flagValue<<<(N + 255) / 256, 256>>>(dIn, dFlags, N, 15);
  HIPCHECK(hipGetLastError());
  exclusiveScan(dFlags, dPos, dSums, dSumsScanned, N);
  scatterSelected<<<(N + 255) / 256, 256>>>(dFlags, dPos, dSel, N);
  HIPCHECK(hipGetLastError());
  HIPCHECK(hipDeviceSynchronize());

  std::vector<int> out(N), pos(N);
  HIPCHECK(hipMemcpy(out.data(), dOut, N * sizeof(int), hipMemcpyDeviceToHost));
  HIPCHECK(hipMemcpy(pos.data(), dPos, N * sizeof(int), hipMemcpyDeviceToHost));
  const int selectedCount = pos[N - 1] + (in[N - 1] == 15 ? 1 : 0);
  std::vector<int> sel(selectedCount);
  HIPCHECK(hipMemcpy(sel.data(), dSel, selectedCount * sizeof(int), hipMemcpyDeviceToHost));

  int running = 0, bad = 0;
  unsigned checksum = 0;
  std::vector<int> refSel;
  for (int i = 0; i < N; ++i) {
    if (out[i] != running) ++bad;
    checksum = checksum * 31u + static_cast<unsigned>(out[i]);
    running += in[i];
    if (in[i] == 15) refSel.push_back(i);
  }
  if (static_cast<int>(refSel.size()) != selectedCount) ++bad;
  long long selSum = 0;
  for (int k = 0; k < selectedCount && k < static_cast<int>(refSel.size()); ++k) {
    if (sel[k] != refSel[k]) ++bad;
    selSum += sel[k];
  }
  printf("n=%d blocks=%d tile=%d\n", N, blocks, TILE);
  printf("total=%d scan[1]=%d scan[123456]=%d scan[n-1]=%d\n", running, out[1], out[123456], out[N - 1]);
  printf("scan checksum=%08x\n", checksum);
  printf("selected (value 15)=%d first=%d last=%d index sum=%lld\n", selectedCount, sel[0], sel[selectedCount - 1],
         selSum);
  printf("mismatches=%d\n", bad);

  HIPCHECK(hipFree(dIn));
  HIPCHECK(hipFree(dOut));
  HIPCHECK(hipFree(dSums));
  HIPCHECK(hipFree(dSumsScanned));
  HIPCHECK(hipFree(dFlags));
  HIPCHECK(hipFree(dPos));
  HIPCHECK(hipFree(dSel));
  return bad == 0 ? 0 : 1;
}
