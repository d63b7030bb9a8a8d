#include <stdint.h>

int32_t to_q16(double x)
{
    double s = x * 65536.0;
    if (s >= 2147483647.0)
        return INT32_MAX;
    if (s <= -2147483648.0)
        return INT32_MIN;
    if (s >= 0.0)
        s += 0.5;
    else
        s -= 0.5;
    return (int32_t)s;
}
