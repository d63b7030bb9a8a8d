#include <stdio.h>

struct stats {
    long sum;
    int min;
    int max;
    int count;
    int negatives;
    double mean;
    long sum_sq;
};

struct stats compute_stats(const int *v, int n);

int main(void)
{
    int a[] = {4, -2, 9, 0, 13, -7, 1000000, -1000000};
    int lens[] = {0, 1, 3, 6, 8};
    for (int k = 0; k < 5; k++) {
        struct stats s = compute_stats(a, lens[k]);
        printf("n=%d sum=%ld min=%d max=%d cnt=%d neg=%d mean=%.17g sq=%ld\n", lens[k], s.sum, s.min, s.max,
               s.count, s.negatives, s.mean, s.sum_sq);
    }
    return 0;
}
