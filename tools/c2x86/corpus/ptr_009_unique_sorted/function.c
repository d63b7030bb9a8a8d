int unique_sorted(int *a, int n)
{
    if (n == 0)
        return 0;
    int w = 1;
    for (int r = 1; r < n; r++) {
        if (a[r] != a[w - 1])
            a[w++] = a[r];
    }
    return w;
}
