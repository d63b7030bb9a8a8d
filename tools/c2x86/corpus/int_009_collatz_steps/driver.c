#include <stdio.h>

int collatz_steps(unsigned long long n);

int main(void)
{
    unsigned long long v[] = {0, 1, 2, 3, 6, 7, 27, 97, 871, 837799, 63728127ULL, 9780657630ULL};
    for (int i = 0; i < 12; i++)
        printf("steps(%llu) = %d\n", v[i], collatz_steps(v[i]));
    return 0;
}
