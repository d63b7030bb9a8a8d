#include <stdio.h>

int collatz_parity_walk(unsigned long n);

int main(void)
{
    unsigned long v[] = {0, 1, 2, 3, 6, 7, 27, 97, 1024, 871};
    for (int i = 0; i < 10; i++)
        printf("%lu -> %d\n", v[i], collatz_parity_walk(v[i]));
    return 0;
}
