#include <stdio.h>

int sum_digits_rec(unsigned long n, int *rounds);

int main(void)
{
    unsigned long v[] = {0, 9, 10, 38, 999999999999UL, 18446744073709551615UL, 123456789UL};
    for (int i = 0; i < 7; i++) {
        int r = 0;
        int s = sum_digits_rec(v[i], &r);
        printf("%lu -> %d after %d rounds\n", v[i], s, r);
    }
    return 0;
}
