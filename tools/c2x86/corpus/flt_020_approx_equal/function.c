int approx_equal(double a, double b)
{
    double diff = a - b;
    if (diff < 0.0)
        diff = -diff;
    if (diff <= 1e-9)
        return 1;
    double aa = a < 0.0 ? -a : a;
    double ab = b < 0.0 ? -b : b;
    double largest = aa > ab ? aa : ab;
    return diff <= largest * 1e-6;
}
