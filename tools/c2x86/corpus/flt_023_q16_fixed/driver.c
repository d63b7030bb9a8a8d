#include <stdio.h>
#include <stdint.h>

int32_t to_q16(double x);

int main(void)
{
    double v[] = {0.0, 1.0, -1.0, 0.5, 1.0 / 3.0, -2.75, 32767.99999, 40000.0, -40000.0, 1.52587890625e-05};
    for (int i = 0; i < 10; i++)
        printf("q16(%.12g) = %d\n", v[i], (int)to_q16(v[i]));
    return 0;
}
