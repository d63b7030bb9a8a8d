#include <stdio.h>

double hex_literal_mix(double x);

int main(void)
{
    double v[] = {0.0, 1.0, -1.0, 0.5, 16.0, -0.125, 3.0};
    for (int i = 0; i < 7; i++)
        printf("f(%g) = %a = %.17g\n", v[i], hex_literal_mix(v[i]), hex_literal_mix(v[i]));
    return 0;
}
