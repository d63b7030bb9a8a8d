#include <stdio.h>

double wrap_degrees_to_rad(double deg);

int main(void)
{
    double v[] = {0.0, 90.0, 180.0, -180.0, 270.0, -270.0, 720.5, -1000.0, 45.0, 359.999};
    for (int i = 0; i < 10; i++)
        printf("%g deg -> %.17g rad\n", v[i], wrap_degrees_to_rad(v[i]));
    return 0;
}
