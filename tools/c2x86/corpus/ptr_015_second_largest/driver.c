#include <stdio.h>

int second_largest(const int *a, int n, int *found);

int main(void)
{
    int a[] = {3, 9, 9, 1, 7, -4};
    int b[] = {5, 5, 5};
    int c[] = {-2147483647 - 1, 2147483647};
    int d[] = {1, 2, 3, 4, 5};
    int f;
    int r = second_largest(a, 6, &f);
    printf("%d %d\n", r, f);
    r = second_largest(b, 3, &f);
    printf("%d %d\n", r, f);
    r = second_largest(c, 2, &f);
    printf("%d %d\n", r, f);
    r = second_largest(d, 5, &f);
    printf("%d %d\n", r, f);
    r = second_largest(d, 0, &f);
    printf("%d %d\n", r, f);
    return 0;
}
