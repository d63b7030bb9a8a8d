#include <stdio.h>

int quadratic_roots(double a, double b, double c, double *r1, double *r2);

int main(void)
{
    double co[][3] = {{1, -3, 2}, {1, 2, 1}, {1, 0, 1}, {0, 2, -4}, {0, 0, 5}, {2, -4, -6}, {1, -1e8, 1}, {1, 0, 0}, {-0.5, 0.25, 3}};
    for (int i = 0; i < 9; i++) {
        double r1 = 0, r2 = 0;
        int n = quadratic_roots(co[i][0], co[i][1], co[i][2], &r1, &r2);
        printf("%d roots: %.10g %.10g\n", n, n ? r1 : 0.0, n ? r2 : 0.0);
    }
    return 0;
}
