#include <stdio.h>
#include <stdint.h>

uint32_t rotl_mix(uint32_t x, unsigned r);

int main(void)
{
    uint32_t x[] = {1, 0x80000000u, 0xDEADBEEFu, 0x12345678u, 0};
    unsigned r[] = {0, 1, 13, 31, 32, 45};
    for (int i = 0; i < 5; i++) {
        printf("%08x:", (unsigned)x[i]);
        for (int j = 0; j < 6; j++)
            printf(" %08x", (unsigned)rotl_mix(x[i], r[j]));
        printf("\n");
    }
    return 0;
}
