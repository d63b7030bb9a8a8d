#include <stdio.h>

double ema_last(const double *x, int n);

int main(void)
{
    double s[] = {10.0, 11.0, 12.5, 9.0, 8.25, 15.0, 30.0, -2.0, 0.0, 5.5};
    for (int n = 0; n <= 10; n += 2)
        printf("ema(%d) = %.17g\n", n, ema_last(s, n));
    printf("ema(1) = %.17g\n", ema_last(s + 5, 1));
    return 0;
}
