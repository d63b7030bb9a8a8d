long long mod_inverse(long long a, long long m)
{
    if (m <= 1)
        return -1;
    long long r0 = m, r1 = a % m;
    if (r1 < 0)
        r1 += m;
    long long t0 = 0, t1 = 1;
    while (r1 != 0) {
        long long q = r0 / r1;
        long long tmp = r0 - q * r1;
        r0 = r1;
        r1 = tmp;
        tmp = t0 - q * t1;
        t0 = t1;
        t1 = tmp;
    }
    if (r0 != 1)
        return -1;
    if (t0 < 0)
        t0 += m;
    return t0;
}
