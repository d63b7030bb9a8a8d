// Wrong: ReLU in place of GELU.
__global__ void triton_poi_fused_gelu_0(const float* in_ptr0, float* out_ptr0, int xnumel)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < xnumel; i += gridDim.x * blockDim.x)
        out_ptr0[i] = fmaxf(in_ptr0[i], 0.0f);
}
