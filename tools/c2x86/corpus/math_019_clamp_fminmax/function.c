#include <math.h>

int clamp_gamma(float linear)
{
    float c = fminf(fmaxf(linear, 0.0f), 1.0f);
    float g = powf(c, 1.0f / 2.2f);
    return (int)(g * 255.0f + 0.5f);
}
