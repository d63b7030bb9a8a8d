#include <stdio.h>

int approx_equal(double a, double b);

int main(void)
{
    double a[] = {0.0, 1.0, 1.0, 1e6, 1e6, 1e-12, -3.0, 0.1 + 0.2, 100.0};
    double b[] = {0.0, 1.0000001, 1.001, 1e6 + 0.5, 1e6 + 2.0, -1e-12, 3.0, 0.3, 100.0001};
    for (int i = 0; i < 9; i++)
        printf("%.17g ~ %.17g : %d\n", a[i], b[i], approx_equal(a[i], b[i]));
    return 0;
}
