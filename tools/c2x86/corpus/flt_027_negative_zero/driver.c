#include <stdio.h>

int signed_zero_info(double x);

int main(void)
{
    double v[] = {0.0, -0.0, 1.5, -1.5, 1e-320, -1e-320};
    for (int i = 0; i < 6; i++)
        printf("%g -> %d\n", v[i], signed_zero_info(v[i]));
    return 0;
}
