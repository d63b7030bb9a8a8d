#include <stdio.h>

int merge_sorted(const int *a, int na, const int *b, int nb, int *out);

int main(void)
{
    int a[] = {1, 4, 4, 9, 15};
    int b[] = {-2, 3, 4, 10, 20, 30};
    int out[16];
    int n = merge_sorted(a, 5, b, 6, out);
    for (int i = 0; i < n; i++) printf("%d ", out[i]);
    printf("(%d)\n", n);
    n = merge_sorted(a, 0, b, 3, out);
    for (int i = 0; i < n; i++) printf("%d ", out[i]);
    printf("(%d)\n", n);
    n = merge_sorted(a, 5, b, 0, out);
    for (int i = 0; i < n; i++) printf("%d ", out[i]);
    printf("(%d)\n", n);
    printf("(%d)\n", merge_sorted(a, 0, b, 0, out));
    return 0;
}
