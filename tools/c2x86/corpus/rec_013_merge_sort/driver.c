#include <stdio.h>

void merge_sort(int *a, int *tmp, int n);

int main(void)
{
    int a[20], tmp[20];
    unsigned x = 12345;
    for (int i = 0; i < 20; i++) {
        x = x * 1103515245u + 12345u;
        a[i] = (int)(x >> 16 & 0x7FFF) - 16384;
    }
    merge_sort(a, tmp, 20);
    for (int i = 0; i < 20; i++)
        printf("%d ", a[i]);
    printf("\n");
    int b[] = {3, 3, 1};
    merge_sort(b, tmp, 3);
    printf("%d %d %d\n", b[0], b[1], b[2]);
    merge_sort(b, tmp, 0);
    printf("%d\n", b[0]);
    return 0;
}
