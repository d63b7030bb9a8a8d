#include <stdio.h>

double drag_force(double v, double area);

int main(void)
{
    double v[] = {0.0, 1.0, 10.0, 33.3, 100.0, -5.0};
    double a[] = {1.0, 0.5, 0.01, 2.2, 1e-4, 1.0};
    for (int i = 0; i < 6; i++)
        printf("F(%g, %g) = %.12g\n", v[i], a[i], drag_force(v[i], a[i]));
    return 0;
}
