#include <stdio.h>

int is_palindrome_alnum(const char *s);

int main(void)
{
    const char *v[] = {"", "a", "A man, a plan, a canal: Panama", "race a car", "No 'x' in Nixon", "12321", "123-21", ".,!", "ab"};
    for (int i = 0; i < 9; i++)
        printf("\"%s\" -> %d\n", v[i], is_palindrome_alnum(v[i]));
    return 0;
}
