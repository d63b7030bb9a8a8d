#include <stdio.h>

double normal_between(double mean, double sd, double lo, double hi);

int main(void)
{
    printf("%.8f\n", normal_between(0, 1, -1, 1));
    printf("%.8f\n", normal_between(0, 1, -2, 2));
    printf("%.8f\n", normal_between(0, 1, -3, 3));
    printf("%.8f\n", normal_between(100, 15, 115, 1e9));
    printf("%.8f\n", normal_between(0, 1, 1, -1));
    printf("%.8f\n", normal_between(5, 0, 0, 10));
    printf("%.8f\n", normal_between(-2.5, 0.5, -3.0, -2.0));
    return 0;
}
