#include <stdio.h>

double scale_extremes(double x, int which);

int main(void)
{
    double v[] = {1.0, 1e10, 0.5, -2.0};
    for (int i = 0; i < 4; i++)
        for (int w = 0; w < 4; w++)
            printf("scale(%g,%d) = %.10g\n", v[i], w, scale_extremes(v[i], w));
    return 0;
}
