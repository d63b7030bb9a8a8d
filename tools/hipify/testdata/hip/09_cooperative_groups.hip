#include <hip/hip_runtime.h>
// Cooperative groups: thread blocks, static tiles, tile shuffles and a grid-wide sync.
#include <cstdio>
#include <hip/hip_cooperative_groups.h>
#include <hip/hip_runtime.h>

namespace cg = cooperative_groups;

__device__ int tileSum(cg::thread_block_tile<32> tile, int v) {
    for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
    return v;
}

__global__ void blockSums(const int* in, int* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    __shared__ int partial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    int s = tileSum(tile, v);
    if (tile.thread_rank() == 0) partial[threadIdx.x / 32] = s;
    block.sync();
    if (block.thread_rank() == 0) {
        int t = 0;
        for (int w = 0; w < (int)(blockDim.x / 32); ++w) t += partial[w];
        out[blockIdx.x] = t;
    }
}

__global__ void gridTotal(int* blockOut, int nblocks, int* total) {
    cg::grid_group grid = cg::this_grid();
    if (grid.thread_rank() == 0) *total = 0;
    grid.sync();
    if (threadIdx.x == 0 && blockIdx.x < nblocks) atomicAdd(total, blockOut[blockIdx.x]);
}

int main() {
    const int n = 1 << 12, threads = 256, blocks = n / threads;
    int h[n];
    for (int i = 0; i < n; ++i) h[i] = i % 3;
    int *din, *dblk, *dtotal;
    hipMalloc(&din, sizeof(h));
    hipMalloc(&dblk, blocks * sizeof(int));
    hipMalloc(&dtotal, sizeof(int));
    hipMemcpy(din, h, sizeof(h), hipMemcpyHostToDevice);
    blockSums<<<blocks, threads>>>(din, dblk, n);
    int coop = 0;
    hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, 0);
    int nb = blocks;
    void* args[] = {&dblk, &nb, &dtotal};
    hipError_t err = hipLaunchCooperativeKernel(reinterpret_cast<const void*>((void*)gridTotal), dim3(blocks), dim3(32), args, 0, 0);
    hipDeviceSynchronize();
    int total = -1;
    hipMemcpy(&total, dtotal, sizeof(int), hipMemcpyDeviceToHost);
    printf("coop=%d launch=%s total=%d\n", coop != 0, hipGetErrorName(err), total);
    hipFree(din); hipFree(dblk); hipFree(dtotal);
    return 0;
}
