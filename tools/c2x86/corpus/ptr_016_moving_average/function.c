int moving_average(const double *x, int n, int k, double *out)
{
    if (k <= 0 || k > n)
        return 0;
    double inv = 1.0 / k;
    double s = 0.0;
    for (int i = 0; i < k; i++)
        s += x[i];
    out[0] = s * inv;
    for (int i = k; i < n; i++) {
        s += x[i] - x[i - k];
        out[i - k + 1] = s * inv;
    }
    return n - k + 1;
}
