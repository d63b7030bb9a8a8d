#include <stdio.h>

long long int_pow(long long base, int exp);

int main(void)
{
    printf("%lld\n", int_pow(2, 10));
    printf("%lld\n", int_pow(-3, 5));
    printf("%lld\n", int_pow(-3, 4));
    printf("%lld\n", int_pow(7, 0));
    printf("%lld\n", int_pow(0, 0));
    printf("%lld\n", int_pow(5, -2));
    printf("%lld\n", int_pow(2, 62));
    printf("%lld\n", int_pow(10, 18));
    printf("%lld\n", int_pow(-2, 63));
    printf("%lld\n", int_pow(1, 1000000));
    return 0;
}
