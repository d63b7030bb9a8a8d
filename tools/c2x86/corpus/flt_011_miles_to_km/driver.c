#include <stdio.h>

double trip_km(const double *miles, int n);

int main(void)
{
    double a[] = {1.0, 2.5, 26.2188, 0.1, 100.0};
    printf("%.3f\n", trip_km(a, 0));
    printf("%.3f\n", trip_km(a, 1));
    printf("%.3f\n", trip_km(a, 3));
    printf("%.3f\n", trip_km(a, 5));
    printf("%.3f\n", trip_km(a + 3, 1));
    return 0;
}
