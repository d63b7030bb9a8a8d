double basel_pi_estimate(int terms)
{
    double s = 0.0;
    for (int k = 1; k <= terms; k++)
        s += 1.0 / ((double)k * k);
    double target = 6.0 * s;
    double lo = 0.0, hi = 4.0;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) * 0.5;
        if (mid * mid < target)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
