#include <stdio.h>

double round_cents(double amount);

int main(void)
{
    double v[] = {0.0, 1.005, 2.675, -2.675, 19.999, -0.004, 123456.785, 0.125, -0.125};
    for (int i = 0; i < 9; i++)
        printf("round(%.17g) = %.17g\n", v[i], round_cents(v[i]));
    return 0;
}
