#include <stdio.h>

int gauss_solve3(const double A[3][3], const double b[3], double x[3]);

int main(void)
{
    double A1[3][3] = {{2, 1, -1}, {-3, -1, 2}, {-2, 1, 2}};
    double b1[3] = {8, -11, -3};
    double A2[3][3] = {{0, 1, 1}, {1, 0, 1}, {1, 1, 0}};
    double b2[3] = {2, 2, 2};
    double A3[3][3] = {{1, 2, 3}, {2, 4, 6}, {1, 0, 1}};
    double b3[3] = {1, 2, 3};
    double A4[3][3] = {{1e-3, 1, 0}, {1, 1, 1}, {0, 0.5, 2.5}};
    double b4[3] = {1, 0.25, -0.75};
    double x[3] = {0, 0, 0};
    int r = gauss_solve3(A1, b1, x);
    printf("%d: %.10g %.10g %.10g\n", r, x[0], x[1], x[2]);
    r = gauss_solve3(A2, b2, x);
    printf("%d: %.10g %.10g %.10g\n", r, x[0], x[1], x[2]);
    r = gauss_solve3(A3, b3, x);
    printf("%d\n", r);
    r = gauss_solve3(A4, b4, x);
    printf("%d: %.10g %.10g %.10g\n", r, x[0], x[1], x[2]);
    return 0;
}
