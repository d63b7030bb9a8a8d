#include <stdio.h>

double discounted_price(double price, int quantity);

int main(void)
{
    double p[] = {9.99, 9.99, 9.99, 9.99, 0.5, 1234.5, 0.0};
    int q[] = {1, 10, 50, 100, 9, 250, 10};
    for (int i = 0; i < 7; i++)
        printf("%g x %d -> %.10f\n", p[i], q[i], discounted_price(p[i], q[i]));
    return 0;
}
