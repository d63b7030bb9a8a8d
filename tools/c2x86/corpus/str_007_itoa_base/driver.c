#include <stdio.h>
#include <limits.h>

int itoa_base(long value, int base, char *buf);

int main(void)
{
    char buf[80];
    long v[] = {0, 255, -255, 123456789, LONG_MIN, LONG_MAX, 35, -1};
    int b[] = {10, 16, 2, 36, 10, 2, 36, 7};
    for (int i = 0; i < 8; i++) {
        int n = itoa_base(v[i], b[i], buf);
        printf("%ld base %d -> %d %s\n", v[i], b[i], n, buf);
    }
    printf("%d [%s]\n", itoa_base(5, 1, buf), buf);
    return 0;
}
