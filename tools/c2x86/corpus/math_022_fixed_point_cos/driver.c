#include <stdio.h>

double cos_fixed_point(double x0, int *iterations);

int main(void)
{
    double s[] = {0.0, 1.0, -5.0, 0.7390851332151607, 100.0};
    for (int i = 0; i < 5; i++) {
        int it;
        double x = cos_fixed_point(s[i], &it);
        printf("start %g -> %.10f (%s)\n", s[i], x, it > 0 && it < 1000 ? "converged" : "no");
    }
    return 0;
}
