#include <stdio.h>

double circle_area_plus_perimeter(double r, double *perimeter);

int main(void)
{
    double r[] = {0.0, 1.0, 0.5, 2.0, 10.0, 1e-3, 123.456};
    for (int i = 0; i < 7; i++) {
        double p;
        double a = circle_area_plus_perimeter(r[i], &p);
        printf("r=%g area=%.15g perim=%.15g\n", r[i], a, p);
    }
    return 0;
}
