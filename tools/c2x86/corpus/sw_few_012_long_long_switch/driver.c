#include <stdio.h>

int ll_bucket(long long x);

int main(void)
{
    long long v[] = {0LL, 1LL, 4294967296LL, -4294967296LL, 9223372036854775807LL, -1LL, 4294967297LL};
    for (int i = 0; i < 7; i++)
        printf("%lld -> %d\n", v[i], ll_bucket(v[i]));
    return 0;
}
