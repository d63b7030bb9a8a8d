#include <stdio.h>

double normalize_angle(double a);

int main(void)
{
    double v[] = {0.0, 1.0, 3.2, -3.2, 6.283185307179586, 10.0, -10.0, 100.0, 3.141592653589793, -3.141592653589793};
    for (int i = 0; i < 10; i++)
        printf("%.6f -> %.6f\n", v[i], normalize_angle(v[i]));
    return 0;
}
