#include <stdio.h>
#include <stddef.h>

size_t upper_copy(char *dst, size_t cap, const char *src);

int main(void)
{
    char buf[8];
    const char *v[] = {"", "abc", "Hello!", "truncate me please", "1234567", "12345678"};
    for (int i = 0; i < 6; i++) {
        size_t n = upper_copy(buf, sizeof buf, v[i]);
        printf("%zu [%s]\n", n, buf);
    }
    buf[0] = 'Q';
    printf("%zu %c\n", upper_copy(buf, 0, "abc"), buf[0]);
    printf("%zu [%s]\n", upper_copy(buf, 1, "abc"), buf);
    return 0;
}
