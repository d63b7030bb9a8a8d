#include <stdio.h>

unsigned gcd_u(unsigned a, unsigned b);

int main(void)
{
    static const unsigned in[][2] = {
        {0, 0}, {0, 7}, {7, 0}, {12, 18}, {17, 5}, {1071, 462},
        {4294967295u, 65535u}, {1u << 31, 1u << 20}, {100, 100}, {999983u, 2u},
    };
    for (unsigned i = 0; i < sizeof in / sizeof in[0]; i++)
        printf("gcd(%u, %u) = %u\n", in[i][0], in[i][1], gcd_u(in[i][0], in[i][1]));
    return 0;
}
