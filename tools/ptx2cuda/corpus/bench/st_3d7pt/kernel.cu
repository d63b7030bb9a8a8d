// 3D 7-point stencil on an nx x ny x nz grid: each thread of a BX x BY
// block owns one (x, y) column and marches along z, keeping the values
// below, at and above it in registers. Boundary cells are copied.
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 8
#endif

__global__ void __launch_bounds__(BX * BY) stencil_7pt(const float* __restrict__ in, float* __restrict__ out,
                                                       int nx, int ny, int nz, float c0, float c1)
{
    const int x = blockIdx.x * BX + threadIdx.x;
    const int y = blockIdx.y * BY + threadIdx.y;
    if (x >= nx || y >= ny)
        return;
    const size_t plane = (size_t)nx * ny;
    const size_t col = (size_t)y * nx + x;
    const bool edge = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
    float below = in[col];
    float here = in[col + plane];
    out[col] = below;
    for (int z = 1; z < nz - 1; ++z) {
        const size_t at = col + z * plane;
        const float above = in[at + plane];
        if (edge)
            out[at] = here;
        else
            out[at] = c0 * here + c1 * (in[at - 1] + in[at + 1] + in[at - nx] + in[at + nx] + below + above);
        below = here;
        here = above;
    }
    out[col + (nz - 1) * plane] = here;
}
