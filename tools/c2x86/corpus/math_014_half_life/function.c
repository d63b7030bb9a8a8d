#include <math.h>

double remaining_fraction(double half_life, double t, double threshold, double *time_to_threshold)
{
    double k = log(2.0) / half_life;
    if (threshold > 0.0 && threshold < 1.0)
        *time_to_threshold = -log(threshold) / k;
    else
        *time_to_threshold = -1.0;
    return exp(-k * t);
}
