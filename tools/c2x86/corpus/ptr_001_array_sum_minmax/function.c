long sum_min_max(const int *a, int n, int *mn, int *mx)
{
    long s = 0;
    if (n <= 0) {
        *mn = *mx = 0;
        return 0;
    }
    *mn = *mx = a[0];
    for (const int *p = a; p < a + n; p++) {
        s += *p;
        if (*p < *mn) *mn = *p;
        if (*p > *mx) *mx = *p;
    }
    return s;
}
