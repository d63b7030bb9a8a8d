#include <stdio.h>

int month_abbrev(int m, char *buf);

int main(void)
{
    char buf[8];
    for (int m = -1; m <= 13; m++) {
        int n = month_abbrev(m, buf);
        printf("%d -> %d '%s'\n", m, n, buf);
    }
    return 0;
}
