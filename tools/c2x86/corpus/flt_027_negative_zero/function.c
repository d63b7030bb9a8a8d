int signed_zero_info(double x)
{
    if (x != 0.0)
        return x > 0.0 ? 2 : -2;
    double inv = 1.0 / x;
    double neg = -x;
    int r = inv > 0.0 ? 1 : -1;
    if (1.0 / neg > 0.0)
        r *= 10;
    return r;
}
