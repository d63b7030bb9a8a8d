// Decompiled triton_poi_fused_gelu_0: exact (erf) GELU, elementwise.
__global__ void triton_poi_fused_gelu_0(const float* in_ptr0, float* out_ptr0, int xnumel)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < xnumel; i += gridDim.x * blockDim.x) {
        float x = in_ptr0[i];
        out_ptr0[i] = 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
    }
}
