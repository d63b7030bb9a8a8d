long prefix_sums(long *a, int n, int l, int r)
{
    for (int i = 1; i < n; i++)
        a[i] += a[i - 1];
    if (l < 0 || r >= n || l > r)
        return 0;
    return l == 0 ? a[r] : a[r] - a[l - 1];
}
