long ext_gcd(long a, long b, long *x, long *y)
{
    if (b == 0) {
        *x = a < 0 ? -1 : 1;
        *y = 0;
        return a < 0 ? -a : a;
    }
    long x1, y1;
    long g = ext_gcd(b, a % b, &x1, &y1);
    *x = y1;
    *y = x1 - (a / b) * y1;
    return g;
}
