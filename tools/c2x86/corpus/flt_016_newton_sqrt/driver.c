#include <stdio.h>

double newton_sqrt(double x);

int main(void)
{
    double v[] = {-4.0, 0.0, 1.0, 2.0, 0.25, 1e-8, 144.0, 1e20, 3.0};
    for (int i = 0; i < 9; i++)
        printf("sqrt(%g) ~ %.10g\n", v[i], newton_sqrt(v[i]));
    return 0;
}
