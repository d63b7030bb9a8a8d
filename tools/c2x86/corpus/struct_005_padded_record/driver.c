#include <stdio.h>

struct record {
    char tag;
    short count;
    int id;
    double weight;
    char flag;
    long long big;
};

long long record_checksum(const struct record *r, int n);

int main(void)
{
    struct record rs[] = {
        {'a', 3, 1001, 2.5, 1, 0x10000000000LL},
        {'Z', -7, -42, 0.01, 0, 12345},
        {0, 32767, 2147483647, -3.75, 1, -1},
        {'x', 0, 0, 1e6, 0, 0x7fffffffffffLL},
    };
    printf("sizeof-check %d\n", (int)sizeof(struct record));
    for (int n = 0; n <= 4; n++)
        printf("n=%d -> %lld\n", n, record_checksum(rs, n));
    return 0;
}
