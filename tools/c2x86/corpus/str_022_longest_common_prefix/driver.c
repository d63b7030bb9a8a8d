#include <stdio.h>

int lcp_words(const char *const *words, int n);

int main(void)
{
    const char *a[] = {"flower", "flow", "flight"};
    const char *b[] = {"interspecies", "interstellar", "interstate"};
    const char *c[] = {"dog", "racecar", "car"};
    const char *d[] = {"same", "same", "same"};
    const char *e[] = {"", "abc"};
    printf("%d\n", lcp_words(a, 3));
    printf("%d\n", lcp_words(b, 3));
    printf("%d\n", lcp_words(c, 3));
    printf("%d\n", lcp_words(d, 3));
    printf("%d\n", lcp_words(e, 2));
    printf("%d\n", lcp_words(b, 1));
    printf("%d\n", lcp_words(b, 0));
    return 0;
}
