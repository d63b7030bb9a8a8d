#include <stdio.h>

double unit_factor(int unit, double amount);

int main(void)
{
    for (int u = -1; u < 5; u++)
        printf("unit %d: %.17g %.17g\n", u, unit_factor(u, 1.0), unit_factor(u, 12.5));
    return 0;
}
