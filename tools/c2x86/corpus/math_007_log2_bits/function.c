#include <math.h>

int bits_needed(unsigned long n)
{
    if (n == 0)
        return 1;
    int b = (int)ceil(log2((double)n + 1.0));
    while (b < 64 && (n >> b) != 0)
        b++;
    while (b > 1 && (n >> (b - 1)) == 0)
        b--;
    return b;
}
