#include <stdio.h>

unsigned long long binomial(unsigned n, unsigned k);

int main(void)
{
    unsigned n[] = {0, 5, 5, 5, 10, 20, 30, 52, 60, 3};
    unsigned k[] = {0, 0, 2, 5, 3, 10, 15, 5, 30, 4};
    for (int i = 0; i < 10; i++)
        printf("C(%u,%u) = %llu\n", n[i], k[i], binomial(n[i], k[i]));
    return 0;
}
