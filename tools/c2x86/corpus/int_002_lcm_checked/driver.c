#include <stdio.h>
#include <limits.h>

long long lcm_checked(int a, int b);

int main(void)
{
    int a[] = {0, 4, -4, 21, 7, 65536, INT_MIN, 46341, 1, 99991};
    int b[] = {5, 6, 6, -6, 13, 65536, 2, 46337, INT_MAX, 99989};
    for (int i = 0; i < 10; i++)
        printf("lcm(%d, %d) = %lld\n", a[i], b[i], lcm_checked(a[i], b[i]));
    return 0;
}
