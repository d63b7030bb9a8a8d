#include <stdint.h>

uint32_t mod_pow(uint32_t base, uint64_t exp, uint32_t mod)
{
    if (mod == 1)
        return 0;
    uint64_t result = 1;
    uint64_t b = base % mod;
    while (exp > 0) {
        if (exp & 1)
            result = result * b % mod;
        b = b * b % mod;
        exp >>= 1;
    }
    return (uint32_t)result;
}
