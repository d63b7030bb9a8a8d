#include <stdio.h>

double det3(const double *m);

int main(void)
{
    double a[] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double b[] = {2, -3, 1, 2, 0, -1, 1, 4, 5};
    double c[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    double d[] = {0.5, 0.25, 0.125, 1e3, -2e3, 4e3, 0.1, 0.2, 0.3};
    printf("%.17g\n", det3(a));
    printf("%.17g\n", det3(b));
    printf("%.17g\n", det3(c));
    printf("%.17g\n", det3(d));
    return 0;
}
