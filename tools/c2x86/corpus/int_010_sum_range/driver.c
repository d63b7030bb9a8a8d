#include <stdio.h>
#include <limits.h>

long long sum_range(int lo, int hi);

int main(void)
{
    printf("%lld\n", sum_range(1, 100));
    printf("%lld\n", sum_range(5, 4));
    printf("%lld\n", sum_range(-10, 10));
    printf("%lld\n", sum_range(-10, 3));
    printf("%lld\n", sum_range(7, 7));
    printf("%lld\n", sum_range(0, INT_MAX));
    printf("%lld\n", sum_range(INT_MIN, -1));
    printf("%lld\n", sum_range(INT_MIN, INT_MAX));
    printf("%lld\n", sum_range(-3, 0));
    return 0;
}
