#include <stdio.h>

struct pt {
    double x, y;
};

struct segment {
    struct pt a;
    struct pt b;
    int id;
};

struct seginfo {
    struct pt mid;
    double len2;
    int id;
};

struct seginfo segment_info(const struct segment *s);

int main(void)
{
    struct segment s[] = {{{0, 0}, {2, 2}, 1}, {{-1, 3}, {4, -9}, 2}, {{0.1, 0.2}, {0.3, 0.4}, 3}, {{5, 5}, {5, 5}, -4}};
    for (int i = 0; i < 4; i++) {
        struct seginfo r = segment_info(&s[i]);
        printf("mid (%.17g, %.17g) len2 %.17g id %d\n", r.mid.x, r.mid.y, r.len2, r.id);
    }
    return 0;
}
