#include <stdio.h>
#include <stdint.h>

uint64_t bswap32_and_64(uint32_t a, uint64_t b, uint32_t *a_swapped);

int main(void)
{
    uint32_t a[] = {0x12345678u, 0, 0xFF000000u, 0xA1B2C3D4u};
    uint64_t b[] = {0x0102030405060708ULL, 0, 0xFFULL, 0xFEDCBA9876543210ULL};
    for (int i = 0; i < 4; i++) {
        uint32_t s;
        uint64_t r = bswap32_and_64(a[i], b[i], &s);
        printf("%08x %016llx\n", (unsigned)s, (unsigned long long)r);
    }
    return 0;
}
