long apply_and_sum(int *a, int n, int (*f)(int))
{
    long s = 0;
    for (int i = 0; i < n; i++) {
        a[i] = f(a[i]);
        s += a[i];
    }
    return s;
}
