#include <stdio.h>

int strcmp_ci(const char *a, const char *b);

int main(void)
{
    const char *a[] = {"", "abc", "ABC", "abc", "abd", "Zebra", "apple", "\xe9t\xe9", "same"};
    const char *b[] = {"", "ABC", "abcd", "ab", "ABC", "aardvark", "Apples", "ete", "SAME"};
    for (int i = 0; i < 9; i++)
        printf("%d\n", strcmp_ci(a[i], b[i]));
    return 0;
}
