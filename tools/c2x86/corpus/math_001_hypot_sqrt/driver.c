#include <stdio.h>

double hypot3(double x, double y, double z);

int main(void)
{
    printf("%.10g\n", hypot3(0, 0, 0));
    printf("%.10g\n", hypot3(1, 2, 2));
    printf("%.10g\n", hypot3(-3, 4, 12));
    printf("%.10g\n", hypot3(1e200, 1e200, 1e200));
    printf("%.10g\n", hypot3(1e-200, -1e-200, 0));
    printf("%.10g\n", hypot3(0.1, 0.2, 0.3));
    return 0;
}
