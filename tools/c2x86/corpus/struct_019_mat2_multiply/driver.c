#include <stdio.h>

struct mat2 {
    long long a, b, c, d;
};

struct mat2 mat2_pow(struct mat2 m, unsigned e);

int main(void)
{
    struct mat2 fib = {1, 1, 1, 0};
    struct mat2 rot = {0, -1, 1, 0};
    unsigned es[] = {0, 1, 2, 10, 50, 90};
    for (int i = 0; i < 6; i++) {
        struct mat2 r = mat2_pow(fib, es[i]);
        printf("fib^%u = [%lld %lld; %lld %lld]\n", es[i], r.a, r.b, r.c, r.d);
    }
    for (unsigned e = 0; e < 5; e++) {
        struct mat2 r = mat2_pow(rot, e);
        printf("rot^%u = [%lld %lld; %lld %lld]\n", e, r.a, r.b, r.c, r.d);
    }
    return 0;
}
