#include <stdio.h>

double poly_eval(double x);

int main(void)
{
    double v[] = {0.0, 1.0, -1.0, 2.5, 100.0, -1000.0, 0.001, 12345.678};
    for (int i = 0; i < 8; i++)
        printf("p(%g) = %.17g\n", v[i], poly_eval(v[i]));
    return 0;
}
