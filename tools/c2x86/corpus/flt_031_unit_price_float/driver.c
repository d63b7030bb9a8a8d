#include <stdio.h>

float unit_price_per_100g(float price, float ounces);

int main(void)
{
    float p[] = {3.99f, 10.0f, 0.5f, 100.0f, 1.0f};
    float o[] = {16.0f, 3.5274f, 1.0f, 0.0f, 1000.0f};
    for (int i = 0; i < 5; i++)
        printf("%.9g\n", unit_price_per_100g(p[i], o[i]));
    return 0;
}
