#include <stdio.h>

long compare_three_way(long a, long b);

int main(void)
{
    long a[] = {1, 5, 5, -10, 0, 1000000000000L};
    long b[] = {5, 1, 5, 10, 0, -1};
    for (int i = 0; i < 6; i++)
        printf("(%ld,%ld) -> %ld\n", a[i], b[i], compare_three_way(a[i], b[i]));
    return 0;
}
