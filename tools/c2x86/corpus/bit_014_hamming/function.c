#include <stddef.h>

int hamming_distance_buf(const unsigned char *a, const unsigned char *b, size_t n)
{
    static const unsigned char nib[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
    int d = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned x = (unsigned)(a[i] ^ b[i]);
        d += nib[x & 0xFu] + nib[x >> 4];
    }
    return d;
}
