static int qs(long *a, int lo, int hi, int depth)
{
    if (lo >= hi)
        return depth;
    long pivot = a[lo + (hi - lo) / 2];
    int i = lo - 1, j = hi + 1;
    for (;;) {
        do i++; while (a[i] < pivot);
        do j--; while (a[j] > pivot);
        if (i >= j)
            break;
        long t = a[i]; a[i] = a[j]; a[j] = t;
    }
    int d1 = qs(a, lo, j, depth + 1);
    int d2 = qs(a, j + 1, hi, depth + 1);
    return d1 > d2 ? d1 : d2;
}

int quicksort_longs(long *a, int n)
{
    return qs(a, 0, n - 1, 0);
}
