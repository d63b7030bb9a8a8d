// Reconstructed kernel: block-level sum of 512 consecutive floats (two per
// thread), shared-memory tree reduction, one result per block.
__global__ void block_sum(const float* __restrict__ in, float* __restrict__ partial, int n)
{
    __shared__ float sdata[256];
    const unsigned int tid = threadIdx.x;
    const unsigned int gid = blockIdx.x * 512u + tid;
    float first = gid < (unsigned int)n ? in[gid] : 0.0f;
    float second = gid + 256u < (unsigned int)n ? in[gid + 256u] : 0.0f;
    sdata[tid] = first + second;
    __syncthreads();
    for (unsigned int s = 128; s != 0; s /= 2) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
