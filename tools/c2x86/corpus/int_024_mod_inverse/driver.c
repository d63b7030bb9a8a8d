#include <stdio.h>

long long mod_inverse(long long a, long long m);

int main(void)
{
    long long a[] = {3, 10, 6, -3, 1, 0, 123456789, 2, 5};
    long long m[] = {11, 17, 9, 11, 1, 7, 1000000007LL, 1000000007LL, -3};
    for (int i = 0; i < 9; i++)
        printf("inv(%lld) mod %lld = %lld\n", a[i], m[i], mod_inverse(a[i], m[i]));
    return 0;
}
