#include <stdint.h>

uint64_t bswap32_and_64(uint32_t a, uint64_t b, uint32_t *a_swapped)
{
    *a_swapped = (a >> 24) | ((a >> 8) & 0xFF00u) | ((a << 8) & 0xFF0000u) | (a << 24);
    uint64_t r = 0;
    for (int i = 0; i < 8; i++) {
        r = (r << 8) | (b & 0xFFu);
        b >>= 8;
    }
    return r;
}
