void reverse_ints(int *a, int n)
{
    int *lo = a;
    int *hi = a + n - 1;
    while (lo < hi) {
        int t = *lo;
        *lo++ = *hi;
        *hi-- = t;
    }
}
