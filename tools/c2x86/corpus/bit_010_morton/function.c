#include <stdint.h>

static uint32_t spread(uint32_t x)
{
    x &= 0xFFFFu;
    x = (x | (x << 8)) & 0x00FF00FFu;
    x = (x | (x << 4)) & 0x0F0F0F0Fu;
    x = (x | (x << 2)) & 0x33333333u;
    x = (x | (x << 1)) & 0x55555555u;
    return x;
}

uint32_t morton_encode(uint16_t x, uint16_t y)
{
    return spread(x) | (spread(y) << 1);
}
