#include <stdio.h>

struct rect {
    int left, top, right, bottom;
};

int rect_intersect(const struct rect *a, const struct rect *b, struct rect *out);

int main(void)
{
    struct rect r[][2] = {
        {{0, 0, 10, 10}, {5, 5, 15, 15}},
        {{0, 0, 10, 10}, {10, 0, 20, 10}},
        {{0, 0, 10, 10}, {2, 3, 4, 5}},
        {{-5, -5, 5, 5}, {-10, -1, 10, 1}},
        {{0, 0, 1, 1}, {2, 2, 3, 3}},
    };
    for (int i = 0; i < 5; i++) {
        struct rect o;
        int area = rect_intersect(&r[i][0], &r[i][1], &o);
        printf("area %d: [%d %d %d %d]\n", area, o.left, o.top, o.right, o.bottom);
    }
    return 0;
}
