#include <math.h>

float rms_and_peak(const float *x, int n, float *peak)
{
    float sum = 0.0f, pk = 0.0f;
    for (int i = 0; i < n; i++) {
        sum += x[i] * x[i];
        float a = fabsf(x[i]);
        if (a > pk)
            pk = a;
    }
    *peak = pk;
    return n > 0 ? sqrtf(sum / (float)n) : 0.0f;
}
