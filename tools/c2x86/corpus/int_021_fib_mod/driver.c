#include <stdio.h>

unsigned fib_mod(unsigned n, unsigned m);

int main(void)
{
    unsigned n[] = {0, 1, 2, 10, 50, 90, 1000, 100000, 5, 7};
    unsigned m[] = {10, 10, 10, 1000, 1000000007u, 4294967295u, 1000000007u, 65536, 1, 0};
    for (int i = 0; i < 10; i++)
        printf("fib(%u) mod %u = %u\n", n[i], m[i], fib_mod(n[i], m[i]));
    return 0;
}
