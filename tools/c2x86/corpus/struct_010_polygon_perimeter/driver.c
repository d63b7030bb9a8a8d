#include <stdio.h>

struct polygon {
    int n;
    int xs[8];
    int ys[8];
};

long polygon_perimeter2(const struct polygon *p, long *perimeter_l1);

int main(void)
{
    struct polygon ps[] = {
        {4, {0, 4, 4, 0}, {0, 0, 3, 3}},
        {3, {0, 10, 0}, {0, 0, 10}},
        {4, {0, 0, 4, 4}, {0, 3, 3, 0}},
        {8, {0, 2, 4, 4, 4, 2, 0, 0}, {0, 0, 0, 2, 4, 4, 4, 2}},
        {1, {5}, {5}},
    };
    for (int i = 0; i < 5; i++) {
        long per;
        long a2 = polygon_perimeter2(&ps[i], &per);
        printf("area2 %ld perimeter %ld\n", a2, per);
    }
    return 0;
}
