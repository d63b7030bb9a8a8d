#include <stdio.h>

int clamp_gamma(float linear);

int main(void)
{
    float v[] = {-1.0f, 0.0f, 0.001f, 0.05f, 0.2140f, 0.5f, 0.9f, 1.0f, 7.0f};
    for (int i = 0; i < 9; i++)
        printf("%g -> %d\n", v[i], clamp_gamma(v[i]));
    return 0;
}
