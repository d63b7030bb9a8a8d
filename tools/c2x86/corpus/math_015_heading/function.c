#include <math.h>

double compass_heading(double east, double north)
{
    if (east == 0.0 && north == 0.0)
        return -1.0;
    double deg = atan2(east, north) * 57.29577951308232;
    deg = fmod(deg + 360.0, 360.0);
    return deg;
}
