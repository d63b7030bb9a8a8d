#include <stdint.h>

union fbits {
    float f;
    uint32_t u;
};

float float_fields(float x, int *sign, int *exponent, uint32_t *mantissa)
{
    union fbits b;
    b.f = x;
    *sign = (int)(b.u >> 31);
    *exponent = (int)((b.u >> 23) & 0xFFu) - 127;
    *mantissa = b.u & 0x7FFFFFu;
    if (((b.u >> 23) & 0xFFu) != 0 && ((b.u >> 23) & 0xFFu) < 0xFEu)
        b.u += 1u << 23; /* multiply by 2 */
    return b.f;
}
