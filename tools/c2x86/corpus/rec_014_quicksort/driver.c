#include <stdio.h>

int quicksort_longs(long *a, int n);

int main(void)
{
    long a[] = {9, -2, 7, 7, 0, 1000000000000L, -5, 3, 8, 1, -1000000000000L, 4};
    int d = quicksort_longs(a, 12);
    printf("depth %d:", d);
    for (int i = 0; i < 12; i++)
        printf(" %ld", a[i]);
    printf("\n");
    long b[16];
    for (int i = 0; i < 16; i++)
        b[i] = 16 - i;
    d = quicksort_longs(b, 16);
    printf("depth %d: %ld .. %ld\n", d, b[0], b[15]);
    printf("depth %d\n", quicksort_longs(b, 1));
    return 0;
}
