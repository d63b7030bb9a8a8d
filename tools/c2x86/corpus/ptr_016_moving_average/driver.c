#include <stdio.h>

int moving_average(const double *x, int n, int k, double *out);

int main(void)
{
    double x[] = {1.0, 2.0, 3.0, 4.0, 5.0, 10.0, -10.0, 0.5};
    double out[8];
    int ks[] = {1, 3, 8, 0, 9};
    for (int t = 0; t < 5; t++) {
        int m = moving_average(x, 8, ks[t], out);
        printf("k=%d m=%d:", ks[t], m);
        for (int i = 0; i < m; i++)
            printf(" %.17g", out[i]);
        printf("\n");
    }
    return 0;
}
