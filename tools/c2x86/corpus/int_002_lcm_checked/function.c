static long long gcd_ll(long long a, long long b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

long long lcm_checked(int a, int b)
{
    if (a == 0 || b == 0)
        return 0;
    long long x = a, y = b;
    if (x < 0) x = -x;
    if (y < 0) y = -y;
    long long l = x / gcd_ll(x, y) * y;
    if (l > 2147483647LL)
        return -1;
    return l;
}
