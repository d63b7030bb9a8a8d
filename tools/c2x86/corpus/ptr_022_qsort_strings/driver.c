#include <stdio.h>

int sort_words(const char **words, int n);

int main(void)
{
    const char *w[] = {"pear", "apple", "fig", "banana", "Apple", "", "cherry", "apple"};
    int l = sort_words(w, 8);
    printf("longest %d\n", l);
    for (int i = 0; i < 8; i++)
        printf("[%s]\n", w[i]);
    printf("longest %d\n", sort_words(w, 0));
    return 0;
}
