#include <stdio.h>

struct frac {
    int num;
    int den;
};

struct frac frac_add(struct frac a, struct frac b);

int main(void)
{
    struct frac a[] = {{1, 2}, {1, 3}, {-1, 4}, {3, -5}, {0, 7}, {5, 6}, {1, 0}, {7, 12}};
    struct frac b[] = {{1, 2}, {1, 6}, {1, 4}, {2, 5}, {0, 9}, {-5, 6}, {1, 2}, {5, 18}};
    for (int i = 0; i < 8; i++) {
        struct frac r = frac_add(a[i], b[i]);
        printf("%d/%d + %d/%d = %d/%d\n", a[i].num, a[i].den, b[i].num, b[i].den, r.num, r.den);
    }
    return 0;
}
