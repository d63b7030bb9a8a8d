#include <stdio.h>

int count_whitespace(const char *s, int *newlines);

int main(void)
{
    const char *v[] = {"", "abc", "a b c", "\t\tx\n", "line one\nline two\n\n", "   "};
    for (int i = 0; i < 6; i++) {
        int nl;
        int w = count_whitespace(v[i], &nl);
        printf("%d: ws=%d nl=%d\n", i, w, nl);
    }
    return 0;
}
