int kth_smallest(int *a, int n, int k)
{
    int lo = 0, hi = n - 1;
    if (k < 0 || k >= n)
        return -1;
    while (lo < hi) {
        int pivot = a[hi];
        int store = lo;
        for (int i = lo; i < hi; i++) {
            if (a[i] < pivot) {
                int t = a[i];
                a[i] = a[store];
                a[store] = t;
                store++;
            }
        }
        int t = a[hi];
        a[hi] = a[store];
        a[store] = t;
        if (store == k)
            return a[store];
        if (store < k)
            lo = store + 1;
        else
            hi = store - 1;
    }
    return a[lo];
}
