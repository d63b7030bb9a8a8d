#include <math.h>

double snap_to_step(double x, double step, int mode)
{
    if (step <= 0.0)
        return x;
    double q = x / step;
    if (mode < 0)
        q = floor(q);
    else if (mode > 0)
        q = ceil(q);
    else
        q = floor(q + 0.5);
    return q * step;
}
