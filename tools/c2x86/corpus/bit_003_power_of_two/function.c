#include <stdint.h>

uint64_t pow2_info(uint64_t x, int *is_pow2)
{
    *is_pow2 = x != 0 && (x & (x - 1)) == 0;
    if (x <= 1)
        return 1;
    x--;
    x |= x >> 1;
    x |= x >> 2;
    x |= x >> 4;
    x |= x >> 8;
    x |= x >> 16;
    x |= x >> 32;
    return x + 1;
}
