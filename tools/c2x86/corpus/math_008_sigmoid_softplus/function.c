#include <math.h>

double logistic_pair(double x, double *softplus)
{
    *softplus = fmax(x, 0.0) + log1p(exp(-fabs(x)));
    if (x >= 0.0) {
        double z = exp(-x);
        return 1.0 / (1.0 + z);
    }
    double z = exp(x);
    return z / (1.0 + z);
}
