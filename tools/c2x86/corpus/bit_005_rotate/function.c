#include <stdint.h>

static uint32_t rotl(uint32_t x, unsigned r)
{
    r &= 31u;
    return r == 0 ? x : (x << r) | (x >> (32u - r));
}

static uint32_t rotr(uint32_t x, unsigned r)
{
    r &= 31u;
    return r == 0 ? x : (x >> r) | (x << (32u - r));
}

uint32_t rotl_mix(uint32_t x, unsigned r)
{
    return rotl(x, r) ^ rotr(x, r * 3u) ^ (x >> 7);
}
