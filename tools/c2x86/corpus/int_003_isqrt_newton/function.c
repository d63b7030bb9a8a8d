#include <stdint.h>

uint64_t isqrt64(uint64_t n)
{
    if (n < 2)
        return n;
    uint64_t x = n / 2 + 1;
    uint64_t y = (x + n / x) / 2;
    while (y < x) {
        x = y;
        y = (x + n / x) / 2;
    }
    return x;
}
