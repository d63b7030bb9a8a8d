#include <limits.h>

int parse_int(const char *s, const char **end)
{
    long long v = 0;
    int neg = 0;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        s++;
    }
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > (long long)INT_MAX + 1)
            v = (long long)INT_MAX + 1;
        s++;
    }
    *end = s;
    if (neg)
        v = -v;
    if (v > INT_MAX)
        return INT_MAX;
    if (v < INT_MIN)
        return INT_MIN;
    return (int)v;
}
