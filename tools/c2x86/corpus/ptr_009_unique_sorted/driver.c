#include <stdio.h>

int unique_sorted(int *a, int n);

int main(void)
{
    int a[] = {-3, -3, -1, 0, 0, 0, 2, 5, 5, 9};
    int n = unique_sorted(a, 10);
    printf("%d:", n);
    for (int i = 0; i < n; i++)
        printf(" %d", a[i]);
    printf("\n");
    int b[] = {7, 7, 7, 7};
    n = unique_sorted(b, 4);
    printf("%d: %d\n", n, b[0]);
    printf("%d\n", unique_sorted(b, 0));
    int c[] = {1, 2, 3};
    printf("%d\n", unique_sorted(c, 3));
    return 0;
}
