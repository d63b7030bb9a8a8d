#include <stdio.h>

int bubble_sort(int *a, int n);

int main(void)
{
    int a[] = {5, 1, 4, 2, 8, -3, 0, 8, 7, -100};
    int b[] = {1, 2, 3, 4, 5};
    int c[] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
    int s = bubble_sort(a, 10);
    printf("swaps %d:", s);
    for (int i = 0; i < 10; i++) printf(" %d", a[i]);
    printf("\nsorted input swaps %d\n", bubble_sort(b, 5));
    s = bubble_sort(c, 9);
    printf("reverse swaps %d first %d last %d\n", s, c[0], c[8]);
    printf("empty swaps %d\n", bubble_sort(c, 0));
    return 0;
}
