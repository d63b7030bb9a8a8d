#include <math.h>

static double f(double x)
{
    return sin(x) * exp(-0.1 * x);
}

double integrate_sin_trap(double a, double b, int n)
{
    if (n <= 0)
        return 0.0;
    double h = (b - a) / n;
    double s = 0.5 * (f(a) + f(b));
    for (int i = 1; i < n; i++)
        s += f(a + i * h);
    return s * h;
}
