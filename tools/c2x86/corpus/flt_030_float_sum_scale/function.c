float scaled_sum_f(const float *a, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += a[i] * 0.001f + 1e-4f;
    return s;
}
