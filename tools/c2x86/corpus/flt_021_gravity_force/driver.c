#include <stdio.h>

double gravity_force(double m1, double m2, double distance_km);

int main(void)
{
    printf("%.10g\n", gravity_force(5.972e24, 7.348e22, 384400.0));
    printf("%.10g\n", gravity_force(5.972e24, 70.0, 6371.0));
    printf("%.10g\n", gravity_force(1.0, 1.0, 0.001));
    printf("%.10g\n", gravity_force(1.989e30, 5.972e24, 1.496e8));
    printf("%.10g\n", gravity_force(1.0, 1.0, 0.0));
    printf("%.10g\n", gravity_force(1e-3, 2e-3, -5.0));
    return 0;
}
