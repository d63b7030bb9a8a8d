#include <stdio.h>

double double_next_up(double x);

int main(void)
{
    double v[] = {0.0, -0.0, 1.0, -1.0, 0.1, 1e308, 1.7976931348623157e308, -4.9406564584124654e-324, 2.0};
    for (int i = 0; i < 9; i++)
        printf("%a -> %a\n", v[i], double_next_up(v[i]));
    return 0;
}
