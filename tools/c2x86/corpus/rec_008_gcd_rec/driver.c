#include <stdio.h>

long gcd_rec(long a, long b);

int main(void)
{
    long a[] = {48, -48, 48, 0, 17, 1L << 40, 600851475143L, 0};
    long b[] = {18, 18, -18, 5, 0, 1L << 35, 6857L * 71, 0};
    for (int i = 0; i < 8; i++)
        printf("gcd(%ld,%ld) = %ld\n", a[i], b[i], gcd_rec(a[i], b[i]));
    return 0;
}
