#include <stdio.h>

float scaled_sum_f(const float *a, int n);

int main(void)
{
    float a[] = {1000.0f, 2000.0f, -500.0f, 0.1f, 12345.6f, 3.0e7f, -3.0e7f, 1.0f};
    printf("%.9g\n", scaled_sum_f(a, 0));
    printf("%.9g\n", scaled_sum_f(a, 1));
    printf("%.9g\n", scaled_sum_f(a, 3));
    printf("%.9g\n", scaled_sum_f(a, 5));
    printf("%.9g\n", scaled_sum_f(a, 8));
    return 0;
}
