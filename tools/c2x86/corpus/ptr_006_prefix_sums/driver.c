#include <stdio.h>

long prefix_sums(long *a, int n, int l, int r);

int main(void)
{
    int q[][2] = {{0, 0}, {0, 7}, {2, 5}, {7, 7}, {5, 2}, {-1, 3}, {3, 8}};
    for (int k = 0; k < 7; k++) {
        long a[] = {5, -2, 7, 0, 11, -20, 3, 1000000000000L};
        long r = prefix_sums(a, 8, q[k][0], q[k][1]);
        printf("[%d,%d] = %ld (total %ld)\n", q[k][0], q[k][1], r, a[7]);
    }
    return 0;
}
