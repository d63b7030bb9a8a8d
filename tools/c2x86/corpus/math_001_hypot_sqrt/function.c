#include <math.h>

double hypot3(double x, double y, double z)
{
    double ax = fabs(x), ay = fabs(y), az = fabs(z);
    double m = ax > ay ? ax : ay;
    if (az > m)
        m = az;
    if (m == 0.0)
        return 0.0;
    ax /= m;
    ay /= m;
    az /= m;
    return m * sqrt(ax * ax + ay * ay + az * az);
}
