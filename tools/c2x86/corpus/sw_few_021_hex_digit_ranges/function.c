#include <stdint.h>

int parse_hex_u32(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    int n = 0;
    for (; *s; s++, n++) {
        int d;
        switch (*s) {
        case '0' ... '9':
            d = *s - '0';
            break;
        case 'a' ... 'f':
            d = *s - 'a' + 10;
            break;
        case 'A' ... 'F':
            d = *s - 'A' + 10;
            break;
        case '_':
            n--;
            continue;
        default:
            return -1;
        }
        if (n >= 8)
            return -2;
        v = (v << 4) | (uint32_t)d;
    }
    if (n == 0)
        return -1;
    *out = v;
    return 0;
}
