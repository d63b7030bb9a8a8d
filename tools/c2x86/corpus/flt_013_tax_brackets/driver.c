#include <stdio.h>

double income_tax(double income);

int main(void)
{
    double v[] = {-5.0, 0.0, 5000.0, 10000.0, 25000.0, 40000.0, 75000.5, 120000.0, 300000.0, 1e7};
    for (int i = 0; i < 10; i++)
        printf("tax(%.2f) = %.4f\n", v[i], income_tax(v[i]));
    return 0;
}
