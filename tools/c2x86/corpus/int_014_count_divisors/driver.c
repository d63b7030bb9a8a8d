#include <stdio.h>

int count_divisors(unsigned n);

int main(void)
{
    unsigned v[] = {0, 1, 2, 12, 16, 36, 97, 360, 720720, 1000000, 4294967295u};
    for (int i = 0; i < 11; i++)
        printf("d(%u) = %d\n", v[i], count_divisors(v[i]));
    return 0;
}
