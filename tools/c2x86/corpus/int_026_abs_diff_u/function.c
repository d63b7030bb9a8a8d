#include <stdint.h>

uint64_t abs_diff_i64(int64_t a, int64_t b)
{
    if (a >= b)
        return (uint64_t)a - (uint64_t)b;
    return (uint64_t)b - (uint64_t)a;
}
