#include <stdio.h>

int bsearch_rec(const int *a, int n, int key);

int main(void)
{
    int a[] = {-9, -4, 0, 3, 8, 15, 22, 37, 51, 99};
    int keys[] = {-9, 99, 15, 0, 1, -100, 100, 37};
    for (int i = 0; i < 8; i++)
        printf("%d -> %d\n", keys[i], bsearch_rec(a, 10, keys[i]));
    printf("empty -> %d\n", bsearch_rec(a, 0, 3));
    return 0;
}
