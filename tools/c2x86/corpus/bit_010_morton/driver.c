#include <stdio.h>
#include <stdint.h>

uint32_t morton_encode(uint16_t x, uint16_t y);

int main(void)
{
    uint16_t x[] = {0, 1, 0, 1, 3, 255, 0xFFFF, 0x1234, 0};
    uint16_t y[] = {0, 0, 1, 1, 5, 255, 0xFFFF, 0x8765, 0xFFFF};
    for (int i = 0; i < 9; i++)
        printf("(%u,%u) -> %#010x\n", x[i], y[i], (unsigned)morton_encode(x[i], y[i]));
    return 0;
}
