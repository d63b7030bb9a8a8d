#include <stdio.h>
#include <stddef.h>

size_t my_strlen(const char *s);

int main(void)
{
    const char *v[] = {"", "a", "hello", "with space", "tab\there", "\xff\x80 high bytes",
                       "a much longer string that goes on for a while to exceed sixty-four characters total"};
    for (int i = 0; i < 7; i++)
        printf("%zu\n", my_strlen(v[i]));
    return 0;
}
