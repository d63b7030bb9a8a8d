#include <stdio.h>

long max_subarray(const int *a, int n, int *start, int *end);

int main(void)
{
    int a[] = {-2, 1, -3, 4, -1, 2, 1, -5, 4};
    int b[] = {-8, -3, -6, -2, -5, -4};
    int c[] = {2147483647, 2147483647, -1, 5};
    int s, e;
    long r = max_subarray(a, 9, &s, &e);
    printf("%ld [%d,%d]\n", r, s, e);
    r = max_subarray(b, 6, &s, &e);
    printf("%ld [%d,%d]\n", r, s, e);
    r = max_subarray(c, 4, &s, &e);
    printf("%ld [%d,%d]\n", r, s, e);
    r = max_subarray(a, 1, &s, &e);
    printf("%ld [%d,%d]\n", r, s, e);
    return 0;
}
