#include <stddef.h>

size_t upper_copy(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    if (cap == 0)
        return 0;
    for (; src[i] && i + 1 < cap; i++) {
        char c = src[i];
        dst[i] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
    }
    dst[i] = '\0';
    return i;
}
