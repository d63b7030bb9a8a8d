#include <math.h>

double compound_amount(double principal, double rate_percent, int periods_per_year, double years)
{
    double r = rate_percent / 100.0;
    if (periods_per_year <= 0)
        return principal * exp(r * years);
    return principal * pow(1.0 + r / periods_per_year, periods_per_year * years);
}
