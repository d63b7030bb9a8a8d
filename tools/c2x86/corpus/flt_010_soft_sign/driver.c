#include <stdio.h>

double soft_sign01(double x);

int main(void)
{
    double v[] = {0.0, 1.0, -1.0, 3.0, -3.0, 1e9, -1e9, 0.001, -0.25};
    for (int i = 0; i < 9; i++)
        printf("s(%g) = %.17g\n", v[i], soft_sign01(v[i]));
    return 0;
}
