double ema_last(const double *x, int n)
{
    if (n == 0)
        return 0.0;
    double e = x[0];
    for (int i = 1; i < n; i++)
        e = 0.125 * x[i] + 0.875 * e;
    return e;
}
