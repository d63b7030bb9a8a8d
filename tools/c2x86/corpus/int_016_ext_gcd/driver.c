#include <stdio.h>

long ext_gcd(long a, long b, long *x, long *y);

int main(void)
{
    long a[] = {240, 46, 17, 0, 5, -12, 1000000007, 99, 35};
    long b[] = {46, 240, 5, 9, 0, 18, 998244353, 78, -64};
    for (int i = 0; i < 9; i++) {
        long x, y;
        long g = ext_gcd(a[i], b[i], &x, &y);
        printf("gcd(%ld,%ld)=%ld x=%ld y=%ld check=%ld\n", a[i], b[i], g, x, y, a[i] * x + b[i] * y);
    }
    return 0;
}
