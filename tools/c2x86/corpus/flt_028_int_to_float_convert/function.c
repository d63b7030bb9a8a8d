float mean_as_float(const int *v, int n)
{
    if (n <= 0)
        return 0.0f;
    long long sum = 0;
    int lo = v[0], hi = v[0];
    for (int i = 0; i < n; i++) {
        sum += v[i];
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    float mean = (float)sum / (float)n;
    float mid = (lo + hi) * 0.5f;
    return mean * 0.75f + mid * 0.25f;
}
