#include <stdio.h>

int floor_divmod(int a, int b, int *rem);

int main(void)
{
    int a[] = {7, -7, 7, -7, 0, 6, -6, 2147483647, -2147483647, 1};
    int b[] = {2, 2, -2, -2, 3, 3, 3, 10, 10, -1000};
    for (int i = 0; i < 10; i++) {
        int r;
        int q = floor_divmod(a[i], b[i], &r);
        printf("%d // %d = %d rem %d\n", a[i], b[i], q, r);
    }
    return 0;
}
