#include <stdio.h>

int is_prime(unsigned long long n);

int main(void)
{
    unsigned long long v[] = {0, 1, 2, 3, 4, 25, 29, 97, 561, 7919, 1000003, 999999000001ULL,
                              2147483647ULL, 4294967291ULL};
    for (int i = 0; i < 14; i++)
        printf("is_prime(%llu) = %d\n", v[i], is_prime(v[i]));
    return 0;
}
