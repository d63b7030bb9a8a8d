#include <stdio.h>

void dense_tanh(const float *w, const float *b, const float *x, float *out, int nin, int nout);

int main(void)
{
    float w[] = {0.5f, -0.25f, 1.0f, 0.0f, 2.0f, -1.0f, 0.1f, 0.1f, 0.1f, -3.0f, 0.0f, 3.0f};
    float b[] = {0.0f, 0.5f, -0.2f, 0.0f};
    float x[] = {1.0f, 2.0f, -1.0f};
    float out[4];
    dense_tanh(w, b, x, out, 3, 4);
    for (int j = 0; j < 4; j++)
        printf("%.6f\n", out[j]);
    float x2[] = {10.0f, -10.0f, 10.0f};
    dense_tanh(w, b, x2, out, 3, 4);
    for (int j = 0; j < 4; j++)
        printf("%.6f\n", out[j]);
    return 0;
}
