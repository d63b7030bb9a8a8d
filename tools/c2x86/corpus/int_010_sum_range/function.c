long long sum_range(int lo, int hi)
{
    if (lo > hi)
        return 0;
    long long n = (long long)hi - lo + 1;
    long long s = (long long)lo + hi;
    if (n % 2 == 0)
        return n / 2 * s;
    return s / 2 * n;
}
