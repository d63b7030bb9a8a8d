#include <stdio.h>

int most_frequent_char(const char *s, int *count);

int main(void)
{
    const char *v[] = {"", "a", "abracadabra", "mississippi", "zzyy", "\xff\xff\x01", "The quick brown fox jumps over the lazy dog"};
    for (int i = 0; i < 7; i++) {
        int c;
        int ch = most_frequent_char(v[i], &c);
        printf("%d x%d\n", ch, c);
    }
    return 0;
}
