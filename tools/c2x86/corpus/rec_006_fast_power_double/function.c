double power_rec(double x, int n)
{
    if (n == 0)
        return 1.0;
    if (n < 0) {
        if (n == -2147483647 - 1)
            return power_rec(1.0 / x, 2147483647) / x;
        return power_rec(1.0 / x, -n);
    }
    double half = power_rec(x, n / 2);
    if (n % 2 == 0)
        return half * half;
    return half * half * x;
}
