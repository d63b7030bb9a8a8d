#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
    const char *const *x = a;
    const char *const *y = b;
    return strcmp(*x, *y);
}

int sort_words(const char **words, int n)
{
    int longest = 0;
    qsort(words, (size_t)n, sizeof words[0], cmp_str);
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(words[i]);
        if (len > longest)
            longest = len;
    }
    return longest;
}
