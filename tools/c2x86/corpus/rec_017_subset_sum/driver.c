#include <stdio.h>

long subset_sum_count(const int *a, int n, long target);

int main(void)
{
    int a[] = {3, 34, 4, 12, 5, 2};
    int b[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    int c[] = {-7, -3, -2, 5, 8};
    printf("%ld\n", subset_sum_count(a, 6, 9));
    printf("%ld\n", subset_sum_count(a, 6, 30));
    printf("%ld\n", subset_sum_count(a, 6, 0));
    printf("%ld\n", subset_sum_count(b, 16, 8));
    printf("%ld\n", subset_sum_count(c, 5, 0));
    printf("%ld\n", subset_sum_count(c, 0, 0));
    return 0;
}
