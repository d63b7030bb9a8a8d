long duration_seconds(const char *s)
{
    long n = 0;
    int digits = 0;
    while (*s >= '0' && *s <= '9') {
        if (n > 100000000L)
            return -1;
        n = n * 10 + (*s++ - '0');
        digits++;
    }
    if (digits == 0 || s[0] == '\0' || s[1] != '\0')
        return -1;
    switch (*s) {
    case 's':
        return n;
    case 'm':
        return n * 60;
    case 'h':
        return n * 3600;
    case 'd':
        return n * 86400;
    case 'w':
        return n * 604800;
    case 'y':
        return n * 31536000;
    default:
        return -1;
    }
}
