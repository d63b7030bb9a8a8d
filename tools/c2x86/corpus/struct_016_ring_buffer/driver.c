#include <stdio.h>

long ring_run(const int *cmds, int n, int *final_count);

int main(void)
{
    int a[] = {1, 2, 3, -1, -1, 4, 5, 6, 7, 8, -1, -1, -1, -1, -1, -1, -1};
    int b[] = {-1, -1, 9};
    int c[] = {10, 20, 30, 40, 50, 60, -1, 70, -1, -1};
    int fc;
    long r = ring_run(a, 17, &fc);
    printf("%ld %d\n", r, fc);
    r = ring_run(b, 3, &fc);
    printf("%ld %d\n", r, fc);
    r = ring_run(c, 10, &fc);
    printf("%ld %d\n", r, fc);
    r = ring_run(a, 9, &fc);
    printf("%ld %d\n", r, fc);
    return 0;
}
