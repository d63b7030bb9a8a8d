#include <math.h>

int quadratic_roots(double a, double b, double c, double *r1, double *r2)
{
    if (a == 0.0) {
        if (b == 0.0)
            return 0;
        *r1 = *r2 = -c / b;
        return 1;
    }
    double disc = b * b - 4.0 * a * c;
    if (disc < 0.0)
        return 0;
    double q = -0.5 * (b + copysign(sqrt(disc), b));
    if (q == 0.0) {
        *r1 = *r2 = 0.0;
        return disc == 0.0 ? 1 : 2;
    }
    double x1 = q / a;
    double x2 = c / q;
    *r1 = x1 < x2 ? x1 : x2;
    *r2 = x1 < x2 ? x2 : x1;
    return disc == 0.0 ? 1 : 2;
}
