#include <string.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int trim_in_place(char *s)
{
    size_t start = 0;
    while (is_space(s[start]))
        start++;
    size_t len = strlen(s + start);
    while (len > 0 && is_space(s[start + len - 1]))
        len--;
    memmove(s, s + start, len);
    s[len] = '\0';
    return (int)len;
}
