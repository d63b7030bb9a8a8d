#include <stdio.h>

double remaining_fraction(double half_life, double t, double threshold, double *time_to_threshold);

int main(void)
{
    double hl[] = {5730.0, 8.02, 1.0, 24110.0, 0.5};
    double t[] = {5730.0, 30.0, 0.0, 1000.0, 10.0};
    double th[] = {0.5, 0.01, 0.999, 1.5, 0.25};
    for (int i = 0; i < 5; i++) {
        double tt;
        double f = remaining_fraction(hl[i], t[i], th[i], &tt);
        printf("%.6g %.6g\n", f, tt);
    }
    return 0;
}
