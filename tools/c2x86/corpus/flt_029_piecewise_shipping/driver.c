#include <stdio.h>

double shipping_cost(double kg, int express);

int main(void)
{
    double kg[] = {0.0, 0.3, 1.0, 1.5, 10.0, 12.25, 100.0, -3.0};
    for (int i = 0; i < 8; i++)
        printf("%g kg: %.6f / %.6f\n", kg[i], shipping_cost(kg[i], 0), shipping_cost(kg[i], 1));
    return 0;
}
