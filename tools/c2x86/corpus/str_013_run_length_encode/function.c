int rle_encode(const char *s, char *out, int cap)
{
    int len = 0;
    while (*s) {
        char c = *s;
        int run = 0;
        while (*s == c) {
            run++;
            s++;
        }
        char digits[12];
        int nd = 0;
        do {
            digits[nd++] = (char)('0' + run % 10);
            run /= 10;
        } while (run);
        if (len + nd + 1 >= cap)
            return -1;
        while (nd)
            out[len++] = digits[--nd];
        out[len++] = c;
    }
    out[len] = '\0';
    return len;
}
