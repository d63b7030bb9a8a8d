#include <stdio.h>

float kelvin_to_f(float k);

int main(void)
{
    float v[] = {0.0f, 273.15f, 373.15f, 310.15f, -10.0f, 5778.0f, 1.0f, 233.15f};
    for (int i = 0; i < 8; i++)
        printf("%.9g K -> %.9g F\n", v[i], kelvin_to_f(v[i]));
    return 0;
}
