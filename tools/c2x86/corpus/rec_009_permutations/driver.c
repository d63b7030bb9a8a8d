#include <stdio.h>

long permutation_checksum(int n, unsigned long *check);

int main(void)
{
    for (int n = -1; n <= 8; n++) {
        unsigned long c;
        long k = permutation_checksum(n, &c);
        printf("n=%d count=%ld check=%lu\n", n, k, c);
    }
    return 0;
}
