#include <stdint.h>

int64_t sign_extend(uint64_t x, unsigned bits)
{
    if (bits == 0 || bits >= 64)
        return (int64_t)x;
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    uint64_t m = (uint64_t)1 << (bits - 1);
    x &= mask;
    uint64_t r = (x ^ m) - m;
    if (r & 0x8000000000000000ULL)
        return -(int64_t)(~r) - 1;
    return (int64_t)r;
}
