#include <stdio.h>

double savings_after(double start, int years);

int main(void)
{
    double s[] = {0.0, 1000.0, 1000.0, 50000.0, -2000.0, 0.01};
    int y[] = {0, 1, 10, 30, 5, 100};
    for (int i = 0; i < 6; i++)
        printf("%g over %d years -> %.10g\n", s[i], y[i], savings_after(s[i], y[i]));
    return 0;
}
