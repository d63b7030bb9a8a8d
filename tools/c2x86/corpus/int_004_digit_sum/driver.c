#include <stdio.h>
#include <limits.h>

int digit_sum(long n);

int main(void)
{
    long v[] = {0, 7, -7, 1234, -98765, 1000000000L, LONG_MAX, LONG_MIN, 999999999999L};
    for (int i = 0; i < 9; i++)
        printf("digit_sum(%ld) = %d\n", v[i], digit_sum(v[i]));
    return 0;
}
