#include <math.h>

struct polar {
    double r;
    double theta;
    double x_back;
    double y_back;
};

struct polar polar_roundtrip(double x, double y)
{
    struct polar p;
    p.r = hypot(x, y);
    p.theta = atan2(y, x);
    p.x_back = p.r * cos(p.theta);
    p.y_back = p.r * sin(p.theta);
    return p;
}
