#include <stdio.h>

long apply_and_sum(int *a, int n, int (*f)(int));

static int square(int x) { return x * x; }
static int negate(int x) { return -x; }
static int halve(int x) { return x / 2; }

int main(void)
{
    int a[] = {1, -2, 3, -4, 5, 1000};
    long s = apply_and_sum(a, 6, square);
    printf("%ld: %d %d %d\n", s, a[0], a[1], a[5]);
    s = apply_and_sum(a, 6, negate);
    printf("%ld: %d %d %d\n", s, a[0], a[1], a[5]);
    s = apply_and_sum(a, 6, halve);
    printf("%ld: %d %d %d\n", s, a[0], a[1], a[5]);
    s = apply_and_sum(a, 0, square);
    printf("%ld\n", s);
    return 0;
}
