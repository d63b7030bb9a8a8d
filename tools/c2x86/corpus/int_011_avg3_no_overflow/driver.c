#include <stdio.h>
#include <limits.h>

int avg3(int a, int b, int c);

int main(void)
{
    printf("%d\n", avg3(1, 2, 3));
    printf("%d\n", avg3(1, 1, 2));
    printf("%d\n", avg3(-1, -1, -2));
    printf("%d\n", avg3(INT_MAX, INT_MAX, INT_MAX));
    printf("%d\n", avg3(INT_MIN, INT_MIN, INT_MIN));
    printf("%d\n", avg3(INT_MAX, INT_MIN, 0));
    printf("%d\n", avg3(5, -3, 0));
    printf("%d\n", avg3(-5, 3, 0));
    printf("%d\n", avg3(0, 0, 0));
    printf("%d\n", avg3(100, 200, -301));
    return 0;
}
