#include <stdio.h>

double snap_to_step(double x, double step, int mode);

int main(void)
{
    double v[] = {0.0, 1.2, -1.2, 2.5, -2.5, 7.49, 100.0};
    double s[] = {0.5, 0.5, 0.5, 1.0, 1.0, 0.25, 0.0};
    for (int i = 0; i < 7; i++)
        printf("%g/%g: %.6g %.6g %.6g\n", v[i], s[i], snap_to_step(v[i], s[i], -1), snap_to_step(v[i], s[i], 0),
               snap_to_step(v[i], s[i], 1));
    return 0;
}
