static void permute(int *a, int k, int n, unsigned long *check, long *count)
{
    if (k == n) {
        unsigned long v = 0;
        for (int i = 0; i < n; i++)
            v = v * 10 + (unsigned long)a[i];
        *check = *check * 1000003u ^ v;
        (*count)++;
        return;
    }
    for (int i = k; i < n; i++) {
        int t = a[k]; a[k] = a[i]; a[i] = t;
        permute(a, k + 1, n, check, count);
        t = a[k]; a[k] = a[i]; a[i] = t;
    }
}

long permutation_checksum(int n, unsigned long *check)
{
    int a[9];
    long count = 0;
    *check = 0;
    if (n < 0 || n > 9)
        return -1;
    for (int i = 0; i < n; i++)
        a[i] = i;
    permute(a, 0, n, check, &count);
    return count;
}
