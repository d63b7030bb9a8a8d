#include <stdio.h>

unsigned long long count_walks_mod(const int *adj, int n, unsigned long long k, int from, int to);

int main(void)
{
    int cycle3[] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
    int complete4[] = {0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0};
    int fib[] = {1, 1, 1, 0};
    printf("%llu\n", count_walks_mod(cycle3, 3, 3, 0, 0));
    printf("%llu\n", count_walks_mod(cycle3, 3, 4, 0, 1));
    printf("%llu\n", count_walks_mod(complete4, 4, 5, 0, 0));
    printf("%llu\n", count_walks_mod(complete4, 4, 1000000, 0, 3));
    printf("%llu\n", count_walks_mod(fib, 2, 90, 0, 1));
    printf("%llu\n", count_walks_mod(fib, 2, 0, 0, 0));
    printf("%llu\n", count_walks_mod(fib, 7, 3, 0, 0));
    return 0;
}
