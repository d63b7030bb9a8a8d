double soft_sign01(double x)
{
    double ax = x < 0.0 ? -x : x;
    return 0.5 * (x / (1.0 + ax)) + 0.5;
}
