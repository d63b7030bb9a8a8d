#include <stdio.h>

double compound_amount(double principal, double rate_percent, int periods_per_year, double years);

int main(void)
{
    printf("%.6f\n", compound_amount(1000.0, 5.0, 1, 10.0));
    printf("%.6f\n", compound_amount(1000.0, 5.0, 12, 10.0));
    printf("%.6f\n", compound_amount(1000.0, 5.0, 365, 10.0));
    printf("%.6f\n", compound_amount(1000.0, 5.0, 0, 10.0));
    printf("%.6f\n", compound_amount(2500.0, 0.0, 4, 3.5));
    printf("%.6f\n", compound_amount(100.0, 12.5, 4, 0.25));
    printf("%.6f\n", compound_amount(100.0, -3.0, 1, 2.0));
    return 0;
}
