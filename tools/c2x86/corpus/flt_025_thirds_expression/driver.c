#include <stdio.h>

double thirds(double x);

int main(void)
{
    double v[] = {0.0, 1.0, 3.0, -3.0, 0.1, 1e10, 7.0};
    for (int i = 0; i < 7; i++)
        printf("thirds(%g) = %.17g\n", v[i], thirds(v[i]));
    return 0;
}
