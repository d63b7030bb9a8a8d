#include <stdio.h>

double weight_on_planet(double earth_kg, int planet);

int main(void)
{
    for (int p = -1; p <= 8; p++)
        printf("planet %d: %.17g\n", p, weight_on_planet(72.5, p));
    return 0;
}
