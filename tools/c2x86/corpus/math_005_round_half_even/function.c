#include <math.h>

double round_half_even(double x, int decimals)
{
    double scale = pow(10.0, decimals);
    double y = x * scale;
    double f = floor(y);
    double diff = y - f;
    double r;
    if (diff > 0.5)
        r = f + 1.0;
    else if (diff < 0.5)
        r = f;
    else
        r = fmod(f, 2.0) == 0.0 ? f : f + 1.0;
    return r / scale;
}
