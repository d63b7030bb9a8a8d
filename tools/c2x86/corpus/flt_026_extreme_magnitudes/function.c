double scale_extremes(double x, int which)
{
    if (which == 0)
        return x * 1e300;
    if (which == 1)
        return x * 1e-300;
    if (which == 2)
        return (double)((float)x * 3.4e38f);
    return (double)((float)x * 1e-38f);
}
