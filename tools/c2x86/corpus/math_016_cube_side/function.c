#include <math.h>

double cube_side_for_volume(double litres, double *surface_m2, long *edge_mm)
{
    double v = litres * 1e-3;
    double s = cbrt(v);
    *surface_m2 = 6.0 * s * s;
    *edge_mm = (long)round(s * 1000.0);
    return s;
}
