#include <stdio.h>

long fib_rec(int n, long *calls);

int main(void)
{
    int v[] = {-3, 0, 1, 2, 10, 20, 25};
    for (int i = 0; i < 7; i++) {
        long calls = 0;
        long f = fib_rec(v[i], &calls);
        printf("fib(%d) = %ld in %ld calls\n", v[i], f, calls);
    }
    return 0;
}
