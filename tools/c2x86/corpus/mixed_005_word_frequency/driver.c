#include <stdio.h>

int top_word(const char *text, char *out, int *distinct);

int main(void)
{
    const char *v[] = {"", "one", "the cat and the hat and THE bat", "To be, or not to be: that is the question.",
                       "a b c d e f a b c a", "internationalization internationalisation"};
    for (int i = 0; i < 6; i++) {
        char w[16];
        int d;
        int c = top_word(v[i], w, &d);
        printf("%d x [%s], %d distinct\n", c, w, d);
    }
    return 0;
}
