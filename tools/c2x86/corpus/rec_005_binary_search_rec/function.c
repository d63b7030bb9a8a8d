static int bs(const int *a, int lo, int hi, int key)
{
    if (lo > hi)
        return -1;
    int mid = lo + (hi - lo) / 2;
    if (a[mid] == key)
        return mid;
    if (a[mid] < key)
        return bs(a, mid + 1, hi, key);
    return bs(a, lo, mid - 1, key);
}

int bsearch_rec(const int *a, int n, int key)
{
    return bs(a, 0, n - 1, key);
}
