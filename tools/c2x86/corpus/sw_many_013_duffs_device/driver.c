#include <stdio.h>

long duff_copy_sum(short *to, const short *from, int count);

int main(void)
{
    short src[40];
    for (int i = 0; i < 40; i++)
        src[i] = (short)(i * 997 - 15000);
    int counts[] = {0, 1, 7, 8, 9, 16, 23, 40};
    for (int k = 0; k < 8; k++) {
        short dst[40] = {0};
        long s = duff_copy_sum(dst, src, counts[k]);
        unsigned long check = 0;
        for (int i = 0; i < 40; i++)
            check = check * 31u + (unsigned short)dst[i];
        printf("count %d: sum %ld check %lu\n", counts[k], s, check);
    }
    return 0;
}
