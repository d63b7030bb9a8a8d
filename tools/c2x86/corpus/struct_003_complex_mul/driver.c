#include <stdio.h>

struct cpx {
    double re;
    double im;
};

struct cpx cmul(struct cpx a, struct cpx b);

int main(void)
{
    struct cpx a[] = {{1, 0}, {0, 1}, {1.5, -2.0}, {3, 4}, {-0.5, 0.25}, {1e10, 1e-10}};
    struct cpx b[] = {{1, 0}, {0, 1}, {2.0, 0.5}, {3, -4}, {0.125, 8}, {1e-10, 1e10}};
    for (int i = 0; i < 6; i++) {
        struct cpx r = cmul(a[i], b[i]);
        printf("(%g%+gi)*(%g%+gi) = %.17g %+.17gi\n", a[i].re, a[i].im, b[i].re, b[i].im, r.re, r.im);
    }
    return 0;
}
