#include <stdio.h>

float season_mean_temp(int month, int southern);

int main(void)
{
    for (int m = 0; m <= 13; m++)
        printf("%d: %.9g %.9g\n", m, season_mean_temp(m, 0), season_mean_temp(m, 1));
    return 0;
}
