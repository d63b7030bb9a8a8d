#include <stdint.h>
#include <string.h>

double double_next_up(double x)
{
    uint64_t u;
    if (x != x)
        return x;
    if (x == 0.0)
        return 4.9406564584124654e-324;
    memcpy(&u, &x, sizeof u);
    if (u == 0x7FF0000000000000ULL)
        return x;
    if (x > 0.0)
        u += 1;
    else
        u -= 1;
    memcpy(&x, &u, sizeof x);
    return x;
}
