#include <stdio.h>

double c_to_f(double c);

int main(void)
{
    double v[] = {0.0, 100.0, -40.0, 37.0, -273.15, 21.5, 1e10, -0.0};
    for (int i = 0; i < 8; i++)
        printf("%.17g -> %.17g\n", v[i], c_to_f(v[i]));
    return 0;
}
