#include <stdio.h>

int kth_smallest(int *a, int n, int k);

int main(void)
{
    for (int k = -1; k <= 10; k++) {
        int a[] = {7, 2, 9, 4, 4, -1, 15, 0, 8, 3};
        printf("k=%d -> %d\n", k, kth_smallest(a, 10, k));
    }
    return 0;
}
