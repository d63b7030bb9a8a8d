#include <stdio.h>

int camel_to_snake(const char *in, char *out, int cap);

int main(void)
{
    char buf[32];
    const char *v[] = {"", "camelCase", "PascalCase", "already_snake", "getHTTPResponse", "x", "a_B", "thisNameIsFarTooLongToFitInBuffer"};
    for (int i = 0; i < 8; i++) {
        int n = camel_to_snake(v[i], buf, (int)sizeof buf);
        printf("%d [%s]\n", n, n >= 0 ? buf : "");
    }
    return 0;
}
