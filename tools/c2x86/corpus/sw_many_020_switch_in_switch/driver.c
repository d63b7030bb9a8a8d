#include <stdio.h>

int tariff_cents(int zone, int band, int minutes);

int main(void)
{
    for (int z = -1; z <= 6; z++)
        printf("zone %d: %d %d %d %d\n", z, tariff_cents(z, 0, 10), tariff_cents(z, 1, 10),
               tariff_cents(z, 2, 7), tariff_cents(z, 3, 1));
    return 0;
}
