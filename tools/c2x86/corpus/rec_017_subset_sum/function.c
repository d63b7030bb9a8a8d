static long count_from(const int *a, int n, int i, long remaining)
{
    if (i == n)
        return remaining == 0;
    return count_from(a, n, i + 1, remaining - a[i]) + count_from(a, n, i + 1, remaining);
}

long subset_sum_count(const int *a, int n, long target)
{
    return count_from(a, n, 0, target);
}
