#include <stdio.h>

int count_words(const char *s, int *longest);

int main(void)
{
    const char *v[] = {"", "   ", "one", "two words", "  leading and trailing  ", "tabs\tand\nnewlines\n\n", "supercalifragilistic is long"};
    for (int i = 0; i < 7; i++) {
        int l;
        int w = count_words(v[i], &l);
        printf("%d words, longest %d\n", w, l);
    }
    return 0;
}
