#include <stdio.h>

struct polar {
    double r;
    double theta;
    double x_back;
    double y_back;
};

struct polar polar_roundtrip(double x, double y);

int main(void)
{
    double xy[][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {3, 4}, {-2, -2}, {0, 0}, {1e-3, 1e3}};
    for (int i = 0; i < 8; i++) {
        struct polar p = polar_roundtrip(xy[i][0], xy[i][1]);
        printf("r=%.6f theta=%.6f back=(%.6f, %.6f)\n", p.r, p.theta, p.x_back, p.y_back);
    }
    return 0;
}
