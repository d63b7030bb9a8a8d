int reverse_digits(int x)
{
    long long r = 0;
    long long v = x;
    int neg = v < 0;
    if (neg)
        v = -v;
    while (v > 0) {
        r = r * 10 + v % 10;
        v /= 10;
    }
    if (neg)
        r = -r;
    if (r > 2147483647LL || r < -2147483648LL)
        return 0;
    return (int)r;
}
