#include <math.h>

double cos_fixed_point(double x0, int *iterations)
{
    double x = x0;
    int i;
    for (i = 0; i < 1000; i++) {
        double next = cos(x);
        if (fabs(next - x) < 1e-13) {
            x = next;
            i++;
            break;
        }
        x = next;
    }
    *iterations = i;
    return x;
}
