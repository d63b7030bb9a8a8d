#include <stddef.h>

size_t common_prefix_len(const unsigned char *a, const unsigned char *b, size_t n, int *diff)
{
    size_t i = 0;
    while (i < n && a[i] == b[i])
        i++;
    *diff = i < n ? (int)a[i] - (int)b[i] : 0;
    return i;
}
