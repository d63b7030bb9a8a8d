#include <stdio.h>

float rms_and_peak(const float *x, int n, float *peak);

int main(void)
{
    float s[] = {1.0f, -1.0f, 1.0f, -1.0f, 0.5f, -2.5f, 3.0f, 0.0f};
    int ns[] = {0, 1, 4, 8, 3};
    for (int i = 0; i < 5; i++) {
        float p;
        float r = rms_and_peak(s, ns[i], &p);
        printf("n=%d rms=%.6g peak=%.6g\n", ns[i], r, p);
    }
    return 0;
}
