#include <stdio.h>

long hanoi(int n, unsigned long *check);

int main(void)
{
    for (int n = 0; n <= 16; n += 2) {
        unsigned long c;
        long m = hanoi(n, &c);
        printf("n=%d moves=%ld check=%lu\n", n, m, c);
    }
    return 0;
}
