#include <stdio.h>

void rotate_array(int *a, int n, int k);

int main(void)
{
    int ks[] = {0, 1, 3, 7, 8, -1, -9, 100};
    for (int t = 0; t < 8; t++) {
        int a[] = {0, 1, 2, 3, 4, 5, 6};
        rotate_array(a, 7, ks[t]);
        printf("k=%d:", ks[t]);
        for (int i = 0; i < 7; i++)
            printf(" %d", a[i]);
        printf("\n");
    }
    return 0;
}
