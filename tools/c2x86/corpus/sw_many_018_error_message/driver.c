#include <stdio.h>

const char *errno_text(int code, int *len);

int main(void)
{
    for (int c = -1; c <= 9; c++) {
        int n;
        const char *m = errno_text(c, &n);
        printf("%d: %s (%d)\n", c, m, n);
    }
    return 0;
}
