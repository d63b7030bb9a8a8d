#include <stdio.h>

double integrate_sin_trap(double a, double b, int n);

int main(void)
{
    printf("%.8f\n", integrate_sin_trap(0.0, 3.141592653589793, 1));
    printf("%.8f\n", integrate_sin_trap(0.0, 3.141592653589793, 10));
    printf("%.8f\n", integrate_sin_trap(0.0, 3.141592653589793, 1000));
    printf("%.8f\n", integrate_sin_trap(0.0, 20.0, 2000));
    printf("%.8f\n", integrate_sin_trap(5.0, -5.0, 100));
    printf("%.8f\n", integrate_sin_trap(0.0, 1.0, 0));
    return 0;
}
