#include <string.h>

int replace_all_chars(char *s, char from, char to)
{
    int n = 0;
    if (from == '\0')
        return 0;
    while ((s = strchr(s, from)) != NULL) {
        *s++ = to;
        n++;
    }
    return n;
}
