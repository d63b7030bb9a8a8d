#include <math.h>

double normal_between(double mean, double sd, double lo, double hi)
{
    if (sd <= 0.0 || hi < lo)
        return 0.0;
    const double inv_sqrt2 = 0.7071067811865476;
    double a = erf((lo - mean) / sd * inv_sqrt2);
    double b = erf((hi - mean) / sd * inv_sqrt2);
    return 0.5 * (b - a);
}
