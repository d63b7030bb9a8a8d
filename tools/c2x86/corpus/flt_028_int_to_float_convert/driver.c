#include <stdio.h>

float mean_as_float(const int *v, int n);

int main(void)
{
    int a[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    int b[] = {-1000000, 1000000, 3, 2000000000, -2000000000};
    printf("%.9g\n", mean_as_float(a, 10));
    printf("%.9g\n", mean_as_float(a, 1));
    printf("%.9g\n", mean_as_float(a, 0));
    printf("%.9g\n", mean_as_float(b, 3));
    printf("%.9g\n", mean_as_float(b, 5));
    printf("%.9g\n", mean_as_float(a + 4, 3));
    return 0;
}
