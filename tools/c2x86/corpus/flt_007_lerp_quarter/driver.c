#include <stdio.h>

float lerp_steps(float a, float b);

int main(void)
{
    float a[] = {0.0f, 1.0f, -10.0f, 3.3f, 1e6f, 0.1f};
    float b[] = {1.0f, 0.0f, 10.0f, 7.7f, -1e6f, 0.2f};
    for (int i = 0; i < 6; i++)
        printf("%.9g\n", lerp_steps(a[i], b[i]));
    return 0;
}
