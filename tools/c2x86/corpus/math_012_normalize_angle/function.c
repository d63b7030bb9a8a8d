#include <math.h>

double normalize_angle(double a)
{
    const double two_pi = 6.283185307179586;
    double r = fmod(a, two_pi);
    if (r <= -3.141592653589793)
        r += two_pi;
    else if (r > 3.141592653589793)
        r -= two_pi;
    return r;
}
