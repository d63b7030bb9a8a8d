#include <stdio.h>

double cube_side_for_volume(double litres, double *surface_m2, long *edge_mm);

int main(void)
{
    double v[] = {1.0, 1000.0, 0.0, 8.0, 2.0, 1e6, 0.125};
    for (int i = 0; i < 7; i++) {
        double s;
        long mm;
        double e = cube_side_for_volume(v[i], &s, &mm);
        printf("%g L: edge %.6g m (%ld mm), surface %.6g m2\n", v[i], e, mm, s);
    }
    return 0;
}
