#include <stdio.h>

int histogram(const int *v, int n, int lo, int width, int *bins, int nbins);

int main(void)
{
    int v[] = {0, 5, 9, 10, 11, 25, 49, 50, -1, 2147483647, -2147483647 - 1, 33, 33, 33};
    int bins[5];
    int o = histogram(v, 14, 0, 10, bins, 5);
    printf("outside %d: %d %d %d %d %d\n", o, bins[0], bins[1], bins[2], bins[3], bins[4]);
    o = histogram(v, 14, -10, 20, bins, 4);
    printf("outside %d: %d %d %d %d\n", o, bins[0], bins[1], bins[2], bins[3]);
    o = histogram(v, 0, 0, 1, bins, 3);
    printf("outside %d: %d %d %d\n", o, bins[0], bins[1], bins[2]);
    return 0;
}
