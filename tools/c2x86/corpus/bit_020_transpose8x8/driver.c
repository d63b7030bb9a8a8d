#include <stdio.h>
#include <stdint.h>

uint64_t transpose8x8(uint64_t x);

int main(void)
{
    uint64_t v[] = {0, 0xFFULL, 0x0101010101010101ULL, 0x8040201008040201ULL, 0x0123456789ABCDEFULL, 0xFFFFFFFFFFFFFFFFULL, 0x1ULL};
    for (int i = 0; i < 7; i++) {
        uint64_t t = transpose8x8(v[i]);
        printf("%016llx -> %016llx -> %016llx\n", (unsigned long long)v[i], (unsigned long long)t,
               (unsigned long long)transpose8x8(t));
    }
    return 0;
}
