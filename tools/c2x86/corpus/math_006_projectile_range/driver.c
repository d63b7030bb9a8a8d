#include <stdio.h>

double projectile(double speed, double angle_deg, double *apex, double *flight_time);

int main(void)
{
    double s[] = {10.0, 10.0, 10.0, 50.0, 0.0, 343.0};
    double a[] = {45.0, 30.0, 60.0, 15.0, 45.0, 89.0};
    for (int i = 0; i < 6; i++) {
        double h, t;
        double r = projectile(s[i], a[i], &h, &t);
        printf("v=%g a=%g: range %.6f apex %.6f time %.6f\n", s[i], a[i], r, h, t);
    }
    return 0;
}
