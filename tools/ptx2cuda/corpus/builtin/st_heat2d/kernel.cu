// One explicit step of the 2D heat equation: a 5-point Laplacian with
// coefficient r on an nx x ny grid whose boundary values stay fixed. Each
// BX x BY block stages its tile plus a one-cell halo in shared memory.
// Adapted from the cuda-synth corpus program sci_01_heat2d_finite_difference
// (rectangular blocks, coefficient as a parameter).
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 8
#endif

__global__ void __launch_bounds__(BX * BY) heat_step(const float* __restrict__ u, float* __restrict__ unew,
                                                     int nx, int ny, float r)
{
    __shared__ float s[BY + 2][BX + 2];
    const int x = blockIdx.x * BX + threadIdx.x;
    const int y = blockIdx.y * BY + threadIdx.y;
    const int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
    const bool inside = x < nx && y < ny;
    s[ty][tx] = inside ? u[y * nx + x] : 0.0f;
    if (threadIdx.x == 0)
        s[ty][0] = x > 0 && y < ny ? u[y * nx + x - 1] : 0.0f;
    if (threadIdx.x == BX - 1)
        s[ty][BX + 1] = x + 1 < nx && y < ny ? u[y * nx + x + 1] : 0.0f;
    if (threadIdx.y == 0)
        s[0][tx] = y > 0 && x < nx ? u[(y - 1) * nx + x] : 0.0f;
    if (threadIdx.y == BY - 1)
        s[BY + 1][tx] = y + 1 < ny && x < nx ? u[(y + 1) * nx + x] : 0.0f;
    __syncthreads();
    if (!inside)
        return;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        unew[y * nx + x] = s[ty][tx];
        return;
    }
    const float c = s[ty][tx];
    const float lap = (s[ty][tx - 1] + s[ty][tx + 1]) + (s[ty - 1][tx] + s[ty + 1][tx]) - 4.0f * c;
    unew[y * nx + x] = c + r * lap;
}
