// Wrong: one element per thread, as if the grid covered xnumel (it covers half).
__global__ void triton_poi_fused_add_0(const float* in_ptr0, const float* in_ptr1, float* out_ptr0, int xnumel)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < xnumel)
        out_ptr0[i] = in_ptr0[i] + in_ptr1[(i / 16512) % 64];
}
