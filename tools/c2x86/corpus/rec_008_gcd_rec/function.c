long gcd_rec(long a, long b)
{
    if (b == 0)
        return a < 0 ? -a : a;
    return gcd_rec(b, a % b);
}
