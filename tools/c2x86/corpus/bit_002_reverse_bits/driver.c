#include <stdio.h>
#include <stdint.h>

uint32_t reverse_bits32(uint32_t x);

int main(void)
{
    uint32_t v[] = {0, 1, 0x80000000u, 0xF0u, 0x12345678u, 0xFFFFFFFFu, 0xAAAAAAAAu, 43261596u};
    for (int i = 0; i < 8; i++)
        printf("%08x -> %08x\n", (unsigned)v[i], (unsigned)reverse_bits32(v[i]));
    return 0;
}
