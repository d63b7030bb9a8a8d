#include <stdio.h>
#include <stdint.h>

uint64_t pow2_info(uint64_t x, int *is_pow2);

int main(void)
{
    uint64_t v[] = {0, 1, 2, 3, 5, 64, 65, 1000, 0x8000000000000000ULL, 0x8000000000000001ULL, 0x7FFFFFFFFFFFFFFFULL};
    for (int i = 0; i < 11; i++) {
        int p;
        uint64_t n = pow2_info(v[i], &p);
        printf("%llu: pow2=%d next=%llu\n", (unsigned long long)v[i], p, (unsigned long long)n);
    }
    return 0;
}
