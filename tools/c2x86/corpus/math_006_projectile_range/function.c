#include <math.h>

double projectile(double speed, double angle_deg, double *apex, double *flight_time)
{
    const double g = 9.80665;
    double a = angle_deg * (3.14159265358979323846 / 180.0);
    double vx = speed * cos(a);
    double vy = speed * sin(a);
    *flight_time = 2.0 * vy / g;
    *apex = vy * vy / (2.0 * g);
    return vx * *flight_time;
}
