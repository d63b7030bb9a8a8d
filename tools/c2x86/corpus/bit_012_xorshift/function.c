#include <stdint.h>

uint64_t xorshift_sum(uint64_t seed, int n, uint32_t *top_sum)
{
    uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ULL;
    uint64_t out = 0;
    uint32_t s = 0;
    for (int i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out = x * 0x2545F4914F6CDD1DULL;
        s += (uint32_t)(out >> 60);
    }
    *top_sum = s;
    return out;
}
