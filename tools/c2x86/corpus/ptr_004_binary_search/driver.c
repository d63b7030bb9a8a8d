#include <stdio.h>

int lower_bound_idx(const long *a, int n, long key);

int main(void)
{
    long a[] = {-50, -3, 0, 0, 0, 7, 12, 12, 99, 1000000000000L};
    long keys[] = {-100, -50, -4, 0, 1, 12, 13, 99, 1000000000000L, 1000000000001L};
    for (int i = 0; i < 10; i++)
        printf("lb(%ld) = %d\n", keys[i], lower_bound_idx(a, 10, keys[i]));
    printf("empty: %d\n", lower_bound_idx(a, 0, 5));
    return 0;
}
