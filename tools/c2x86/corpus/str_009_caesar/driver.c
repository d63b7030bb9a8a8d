#include <stdio.h>
#include <string.h>

void caesar_shift(char *s, int shift);

int main(void)
{
    int shifts[] = {0, 3, -3, 13, 26, 27, -1000, 2147483647};
    for (int i = 0; i < 8; i++) {
        char buf[64];
        strcpy(buf, "The Quick Brown Fox, 123 jumps!");
        caesar_shift(buf, shifts[i]);
        printf("%d: %s\n", shifts[i], buf);
    }
    return 0;
}
