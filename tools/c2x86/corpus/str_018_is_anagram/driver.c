#include <stdio.h>

int is_anagram(const char *a, const char *b);

int main(void)
{
    const char *a[] = {"listen", "Dormitory", "hello", "", "abc", "The eyes", "aab"};
    const char *b[] = {"silent", "dirty room!", "world", "", "abcd", "They see", "abb"};
    for (int i = 0; i < 7; i++)
        printf("\"%s\" vs \"%s\": %d\n", a[i], b[i], is_anagram(a[i], b[i]));
    return 0;
}
