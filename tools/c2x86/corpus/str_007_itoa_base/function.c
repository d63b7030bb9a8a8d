int itoa_base(long value, int base, char *buf)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    char tmp[72];
    int n = 0, len = 0;
    if (base < 2 || base > 36) {
        buf[0] = '\0';
        return -1;
    }
    unsigned long u = value < 0 ? 0UL - (unsigned long)value : (unsigned long)value;
    do {
        tmp[n++] = digits[u % (unsigned)base];
        u /= (unsigned)base;
    } while (u);
    if (value < 0)
        buf[len++] = '-';
    while (n > 0)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}
