#include <stdio.h>
#include <stdint.h>

uint32_t mod_pow(uint32_t base, uint64_t exp, uint32_t mod);

int main(void)
{
    printf("%u\n", mod_pow(2, 10, 1000));
    printf("%u\n", mod_pow(3, 0, 7));
    printf("%u\n", mod_pow(0, 0, 7));
    printf("%u\n", mod_pow(5, 3, 1));
    printf("%u\n", mod_pow(2, 1000000007ULL - 2, 1000000007u));
    printf("%u\n", mod_pow(4294967295u, 4294967297ULL, 4294967291u));
    printf("%u\n", mod_pow(123456789, 987654321, 998244353u));
    printf("%u\n", mod_pow(7, 18446744073709551615ULL, 13));
    return 0;
}
