#include <stdio.h>
#include <stdint.h>

int popcount64(uint64_t x);

int main(void)
{
    uint64_t v[] = {0, 1, 2, 3, 0xFF, 0x8000000000000000ULL, 0xFFFFFFFFFFFFFFFFULL, 0x5555555555555555ULL, 0x123456789ABCDEF0ULL};
    for (int i = 0; i < 9; i++)
        printf("%#llx -> %d\n", (unsigned long long)v[i], popcount64(v[i]));
    return 0;
}
