#include <stdio.h>

double power_rec(double x, int n);

int main(void)
{
    printf("%.17g\n", power_rec(2.0, 10));
    printf("%.17g\n", power_rec(2.0, -3));
    printf("%.17g\n", power_rec(1.5, 7));
    printf("%.17g\n", power_rec(-3.0, 5));
    printf("%.17g\n", power_rec(10.0, 22));
    printf("%.17g\n", power_rec(0.5, 1100));
    printf("%.17g\n", power_rec(1.0000001, 1000000));
    printf("%.17g\n", power_rec(7.0, 0));
    printf("%.17g\n", power_rec(1.0, -2147483647 - 1));
    return 0;
}
