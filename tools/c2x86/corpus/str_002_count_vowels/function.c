#include <string.h>

int count_vowels(const char *s)
{
    int n = 0;
    for (; *s; s++)
        if (strchr("aeiouAEIOU", *s) != NULL)
            n++;
    return n;
}
