#include <stdio.h>
#include <stdint.h>

uint64_t xorshift_sum(uint64_t seed, int n, uint32_t *top_sum);

int main(void)
{
    uint64_t seeds[] = {1, 0, 42, 0xFFFFFFFFFFFFFFFFULL};
    int ns[] = {0, 1, 10, 1000};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            uint32_t t;
            uint64_t r = xorshift_sum(seeds[i], ns[j], &t);
            printf("%016llx %u\n", (unsigned long long)r, (unsigned)t);
        }
    return 0;
}
