#include <stdio.h>
#include <string.h>

int reverse_string(char *s);

int main(void)
{
    const char *v[] = {"", "x", "ab", "abc", "racecar", "Hello, World!", "12345678"};
    for (int i = 0; i < 7; i++) {
        char buf[32];
        strcpy(buf, v[i]);
        int n = reverse_string(buf);
        printf("%d [%s]\n", n, buf);
    }
    return 0;
}
