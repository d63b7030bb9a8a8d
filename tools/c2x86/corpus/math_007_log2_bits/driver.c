#include <stdio.h>

int bits_needed(unsigned long n);

int main(void)
{
    unsigned long v[] = {0, 1, 2, 3, 4, 255, 256, 1000000, 4294967295UL, 4294967296UL,
                         18446744073709551615UL, 9007199254740993UL};
    for (int i = 0; i < 12; i++)
        printf("%lu -> %d\n", v[i], bits_needed(v[i]));
    return 0;
}
