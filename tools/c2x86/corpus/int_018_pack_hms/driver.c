#include <stdio.h>

long pack_hms(long seconds);

int main(void)
{
    long v[] = {0, 59, 60, 61, 3599, 3600, 3661, 86399, 86400, -3661, 1000000, 123456789};
    for (int i = 0; i < 12; i++)
        printf("%ld -> %ld\n", v[i], pack_hms(v[i]));
    return 0;
}
