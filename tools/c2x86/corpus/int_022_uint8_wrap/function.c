#include <stdint.h>

int mix_bytes(uint8_t a, uint8_t b, int8_t c)
{
    uint8_t sum = a + b;
    uint8_t diff = a - b;
    int8_t neg = (int8_t)(-c);
    int wide = a * b;
    int16_t s16 = (int16_t)(wide - 30000);
    return sum + diff * 3 + neg * 7 + wide / 16 + s16;
}
