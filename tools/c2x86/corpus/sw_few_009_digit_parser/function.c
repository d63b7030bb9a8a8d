int parse_signed_digits(const char *s, long *out)
{
    int state = 0;
    int neg = 0;
    long v = 0;
    for (; *s; s++) {
        char c = *s;
        switch (state) {
        case 0:
            if (c == '-' || c == '+') {
                neg = c == '-';
                state = 1;
                break;
            }
            /* fall through */
        case 1:
            if (c < '0' || c > '9')
                return -1;
            v = c - '0';
            state = 2;
            break;
        case 2:
            if (c < '0' || c > '9')
                return -1;
            if (v > 100000000000L)
                return -1;
            v = v * 10 + (c - '0');
            break;
        }
    }
    if (state != 2)
        return -1;
    *out = neg ? -v : v;
    return 0;
}
