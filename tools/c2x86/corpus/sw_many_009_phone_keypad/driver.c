#include <stdio.h>
#include <string.h>

int keypad_digits(char *s);

int main(void)
{
    const char *v[] = {"", "1-800-FLOWERS", "hello world", "SQUIZ", "0123", "Mixed.Case!"};
    for (int i = 0; i < 6; i++) {
        char buf[64];
        strcpy(buf, v[i]);
        int n = keypad_digits(buf);
        printf("%s -> %s (%d)\n", v[i], buf, n);
    }
    return 0;
}
