#include <stdio.h>
#include <string.h>

int trim_in_place(char *s);

int main(void)
{
    const char *v[] = {"", "   ", "abc", "  abc", "abc  ", " \t a b c \r\n", "\f\vx"};
    for (int i = 0; i < 7; i++) {
        char buf[32];
        strcpy(buf, v[i]);
        int n = trim_in_place(buf);
        printf("%d [%s]\n", n, buf);
    }
    return 0;
}
