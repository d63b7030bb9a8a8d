int two_sum_sorted(const int *a, int n, long target, int *i_out, int *j_out)
{
    const int *l = a, *r = a + n - 1;
    while (l < r) {
        long s = (long)*l + *r;
        if (s == target) {
            *i_out = (int)(l - a);
            *j_out = (int)(r - a);
            return 1;
        }
        if (s < target)
            l++;
        else
            r--;
    }
    *i_out = *j_out = -1;
    return 0;
}
