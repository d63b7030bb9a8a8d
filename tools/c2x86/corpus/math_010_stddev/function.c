#include <math.h>

double sample_stddev(const double *x, int n, double *mean_out)
{
    double mean = 0.0, m2 = 0.0;
    for (int i = 0; i < n; i++) {
        double d = x[i] - mean;
        mean += d / (i + 1);
        m2 += d * (x[i] - mean);
    }
    *mean_out = mean;
    if (n < 2)
        return 0.0;
    return sqrt(m2 / (n - 1));
}
