long max_subarray(const int *a, int n, int *start, int *end)
{
    long best = a[0], cur = a[0];
    int s = 0;
    *start = *end = 0;
    for (int i = 1; i < n; i++) {
        if (cur < 0) {
            cur = a[i];
            s = i;
        } else {
            cur += a[i];
        }
        if (cur > best) {
            best = cur;
            *start = s;
            *end = i;
        }
    }
    return best;
}
