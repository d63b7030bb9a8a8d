#include <stdio.h>

double round_half_even(double x, int decimals);

int main(void)
{
    double v[] = {0.5, 1.5, 2.5, -0.5, -1.5, 2.675, 0.125, 0.375, 1234.5678};
    int d[] = {0, 0, 0, 0, 0, 2, 2, 2, 1};
    for (int i = 0; i < 9; i++)
        printf("%g (%d) -> %.10g\n", v[i], d[i], round_half_even(v[i], d[i]));
    return 0;
}
