#include <stdint.h>

int lowest_set_index(uint32_t x)
{
    static const int table[32] = {
        0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8,
        31, 27, 13, 23, 21, 19, 16, 7, 26, 12, 18, 6, 11, 5, 10, 9,
    };
    if (x == 0)
        return -1;
    uint32_t low = x & (0u - x);
    return table[(uint32_t)(low * 0x077CB531u) >> 27];
}
