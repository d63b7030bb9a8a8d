#include <stdio.h>

double round_with_mode(double x, int mode);

int main(void)
{
    double v[] = {2.5, -2.5, 2.4, -2.6, 7.0, -0.5, 123456.5};
    for (int i = 0; i < 7; i++) {
        printf("%g:", v[i]);
        for (int m = 0; m < 5; m++)
            printf(" %g", round_with_mode(v[i], m));
        printf("\n");
    }
    return 0;
}
