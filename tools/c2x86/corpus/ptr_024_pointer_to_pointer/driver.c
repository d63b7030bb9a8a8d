#include <stdio.h>

int find_min_ptr(long *a, int n, long **where);

int main(void)
{
    long a[] = {40, 7, 99, -3, 12, -3, 500};
    long *w;
    int i = find_min_ptr(a, 7, &w);
    printf("%d %ld\n", i, *w);
    *w = 1000;
    i = find_min_ptr(a, 7, &w);
    printf("%d %ld\n", i, *w);
    i = find_min_ptr(a, 1, &w);
    printf("%d %ld\n", i, *w);
    i = find_min_ptr(a, 0, &w);
    printf("%d %d\n", i, w == 0);
    return 0;
}
