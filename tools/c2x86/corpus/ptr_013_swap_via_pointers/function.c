static void swap_int(int *x, int *y)
{
    int t = *x;
    *x = *y;
    *y = t;
}

int sort3(int *a, int *b, int *c)
{
    int n = 0;
    if (*a > *b) { swap_int(a, b); n++; }
    if (*b > *c) { swap_int(b, c); n++; }
    if (*a > *b) { swap_int(a, b); n++; }
    return n;
}
