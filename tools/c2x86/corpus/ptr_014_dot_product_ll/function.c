#include <stdint.h>

int64_t dot_i32(const int32_t *a, const int32_t *b, int n, int stride_b)
{
    int64_t s = 0;
    for (int i = 0; i < n; i++)
        s += (int64_t)a[i] * b[(long)i * stride_b];
    return s;
}
