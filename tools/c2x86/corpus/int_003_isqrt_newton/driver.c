#include <stdio.h>
#include <stdint.h>

uint64_t isqrt64(uint64_t n);

int main(void)
{
    uint64_t v[] = {0, 1, 2, 3, 4, 15, 16, 17, 99, 1000000, 999999999999ULL,
                    18446744073709551615ULL, 4611686018427387904ULL};
    for (int i = 0; i < 13; i++)
        printf("isqrt(%llu) = %llu\n", (unsigned long long)v[i], (unsigned long long)isqrt64(v[i]));
    return 0;
}
