double poly_eval(double x)
{
    return ((3e-5 * x - 1.25) * x + 0.5) * x + 2.75;
}
