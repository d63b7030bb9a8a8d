#include <stdint.h>

uint64_t hex_to_u64(const char *s, int *ndigits)
{
    uint64_t v = 0;
    int n = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    for (;; s++, n++) {
        unsigned d;
        char c = *s;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            break;
        v = (v << 4) | d;
    }
    *ndigits = n;
    return v;
}
