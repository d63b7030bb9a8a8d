#include <stdio.h>

int two_sum_sorted(const int *a, int n, long target, int *i_out, int *j_out);

int main(void)
{
    int a[] = {-10, -3, 0, 2, 5, 8, 11, 2147483647};
    long t[] = {0, 10, 8, -13, 100, 2147483647L + 11, 7, -20};
    for (int k = 0; k < 8; k++) {
        int i, j;
        int ok = two_sum_sorted(a, 8, t[k], &i, &j);
        printf("%ld: %d (%d,%d)\n", t[k], ok, i, j);
    }
    return 0;
}
