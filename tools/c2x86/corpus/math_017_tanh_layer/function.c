#include <math.h>

void dense_tanh(const float *w, const float *b, const float *x, float *out, int nin, int nout)
{
    for (int j = 0; j < nout; j++) {
        float s = b[j];
        for (int i = 0; i < nin; i++)
            s += w[j * nin + i] * x[i];
        out[j] = tanhf(s);
    }
}
