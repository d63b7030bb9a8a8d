#include <stdio.h>
#include <stdint.h>

float float_fields(float x, int *sign, int *exponent, uint32_t *mantissa);

int main(void)
{
    float v[] = {1.0f, -1.0f, 0.5f, 3.14159f, 0.0f, -0.0f, 1e-40f, 3.0e38f, 0.1f};
    for (int i = 0; i < 9; i++) {
        int s, e;
        uint32_t m;
        float d = float_fields(v[i], &s, &e, &m);
        printf("%.9g: s=%d e=%d m=%#x -> %.9g\n", v[i], s, e, (unsigned)m, d);
    }
    return 0;
}
