#include <stdio.h>

double logistic_pair(double x, double *softplus);

int main(void)
{
    double v[] = {0.0, 1.0, -1.0, 5.0, -5.0, 40.0, -40.0, 800.0, -800.0};
    for (int i = 0; i < 9; i++) {
        double sp;
        double s = logistic_pair(v[i], &sp);
        printf("x=%g sigmoid=%.10g softplus=%.10g\n", v[i], s, sp);
    }
    return 0;
}
