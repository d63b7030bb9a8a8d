#include <stdio.h>

int count_vowels(const char *s);

int main(void)
{
    const char *v[] = {"", "bcdfg", "AEIOU", "Hello, World!", "Onomatopoeia", "rhythm", "queueing"};
    for (int i = 0; i < 7; i++)
        printf("%s -> %d\n", v[i], count_vowels(v[i]));
    return 0;
}
