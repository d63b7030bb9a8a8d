#include <stdio.h>

double basel_pi_estimate(int terms);

int main(void)
{
    int t[] = {0, 1, 2, 10, 100, 1000, 100000};
    for (int i = 0; i < 7; i++)
        printf("%d terms -> %.12f\n", t[i], basel_pi_estimate(t[i]));
    return 0;
}
