#include <stdio.h>

double compass_heading(double east, double north);

int main(void)
{
    double e[] = {0, 1, 1, 0, -1, -1, 0, 1e-9, 0};
    double n[] = {1, 1, 0, -1, -1, 0, 0, 1, -1e-300};
    for (int i = 0; i < 9; i++)
        printf("(%g, %g) -> %.6f\n", e[i], n[i], compass_heading(e[i], n[i]));
    return 0;
}
