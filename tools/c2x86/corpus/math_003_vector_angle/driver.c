#include <stdio.h>

double angle_degrees(double ax, double ay, double bx, double by);

int main(void)
{
    printf("%.6f\n", angle_degrees(1, 0, 0, 1));
    printf("%.6f\n", angle_degrees(1, 0, 1, 0));
    printf("%.6f\n", angle_degrees(1, 0, -1, 0));
    printf("%.6f\n", angle_degrees(1, 1, 1, 0));
    printf("%.6f\n", angle_degrees(3, 4, -4, 3));
    printf("%.6f\n", angle_degrees(0, 0, 1, 1));
    printf("%.6f\n", angle_degrees(1, 2, 3, 4));
    return 0;
}
