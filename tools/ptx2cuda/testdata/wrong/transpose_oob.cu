// Wrong on purpose: writes 4 GiB past the output (an illegal address:
// the harness's CUDA error check exits 1, crash).
#define TILE 32
#define ROWS 8
__global__ void __launch_bounds__(TILE * ROWS) transpose(const float* __restrict__ in, float* __restrict__ out,
                                                         int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < height && y + j < width)
            out[(size_t)(y + j) * height + x + (1ull << 30)] = tile[threadIdx.x][threadIdx.y + j];
}
