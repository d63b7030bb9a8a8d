#include <stdio.h>

int find_substring(const char *hay, const char *needle);

int main(void)
{
    const char *h[] = {"hello world", "hello world", "aaaaab", "abc", "", "mississippi", "abc"};
    const char *n[] = {"world", "o w", "aab", "abcd", "x", "issip", ""};
    for (int i = 0; i < 7; i++)
        printf("find(\"%s\", \"%s\") = %d\n", h[i], n[i], find_substring(h[i], n[i]));
    return 0;
}
