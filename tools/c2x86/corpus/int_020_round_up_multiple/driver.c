#include <stdio.h>

long round_up_multiple(long value, long step);

int main(void)
{
    long v[] = {0, 1, 7, 8, 9, -1, -7, -8, -9, 1000001, 5};
    long s[] = {8, 8, 8, 8, 8, 8, 8, 8, 8, 4096, 0};
    for (int i = 0; i < 11; i++)
        printf("round_up(%ld, %ld) = %ld\n", v[i], s[i], round_up_multiple(v[i], s[i]));
    return 0;
}
