#include <stdio.h>
#include <stdint.h>

int parity64(uint64_t x);

int main(void)
{
    uint64_t v[] = {0, 1, 3, 7, 0xFF, 0x8000000000000001ULL, 0x8000000000000000ULL, 0xFFFFFFFFFFFFFFFEULL, 0x123456789ULL};
    for (int i = 0; i < 9; i++)
        printf("%#llx -> %d\n", (unsigned long long)v[i], parity64(v[i]));
    return 0;
}
