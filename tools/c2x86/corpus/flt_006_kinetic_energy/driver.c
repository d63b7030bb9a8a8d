#include <stdio.h>

float kinetic_energy(float mass_kg, float speed_kmh);

int main(void)
{
    float m[] = {1.0f, 1500.0f, 70.0f, 0.145f, 0.0f, 2.5e5f};
    float v[] = {3.6f, 100.0f, 36.0f, 150.0f, 50.0f, 900.0f};
    for (int i = 0; i < 6; i++)
        printf("E(%g kg, %g km/h) = %.9g\n", m[i], v[i], kinetic_energy(m[i], v[i]));
    return 0;
}
