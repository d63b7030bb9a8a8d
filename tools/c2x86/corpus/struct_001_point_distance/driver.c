#include <stdio.h>

struct point {
    int x;
    int y;
};

long long manhattan_and_sq(struct point a, struct point b, long long *sq);

int main(void)
{
    struct point p[][2] = {{{0, 0}, {3, 4}}, {{-1, -1}, {1, 1}}, {{5, 5}, {5, 5}},
                           {{-1500000000, 0}, {1500000000, 0}}, {{100, -200}, {-300, 400}}};
    for (int i = 0; i < 5; i++) {
        long long sq;
        long long m = manhattan_and_sq(p[i][0], p[i][1], &sq);
        printf("%lld %lld\n", m, sq);
    }
    return 0;
}
