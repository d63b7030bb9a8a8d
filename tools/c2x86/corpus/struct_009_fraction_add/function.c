struct frac {
    int num;
    int den;
};

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

struct frac frac_add(struct frac a, struct frac b)
{
    long long n = (long long)a.num * b.den + (long long)b.num * a.den;
    long long d = (long long)a.den * b.den;
    struct frac r = {0, 1};
    if (d == 0)
        return r;
    long long g = gcd_ll(n, d);
    if (g == 0)
        g = 1;
    n /= g;
    d /= g;
    if (d < 0) {
        n = -n;
        d = -d;
    }
    r.num = (int)n;
    r.den = (int)d;
    return r;
}
