#include <stdio.h>

long sum_min_max(const int *a, int n, int *mn, int *mx);

int main(void)
{
    int a[] = {3, -1, 4, 1, -5, 9, 2, 6, 2147483647, -2147483647 - 1};
    int lens[] = {0, 1, 2, 8, 10};
    for (int i = 0; i < 5; i++) {
        int mn, mx;
        long s = sum_min_max(a, lens[i], &mn, &mx);
        printf("n=%d sum=%ld min=%d max=%d\n", lens[i], s, mn, mx);
    }
    return 0;
}
