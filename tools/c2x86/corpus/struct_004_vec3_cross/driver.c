#include <stdio.h>

struct vec3 {
    float x, y, z;
};

struct vec3 vec3_cross(struct vec3 a, struct vec3 b);

int main(void)
{
    struct vec3 a[] = {{1, 0, 0}, {0, 1, 0}, {1, 2, 3}, {-1.5f, 2.25f, 0.5f}, {2, 2, 2}};
    struct vec3 b[] = {{0, 1, 0}, {0, 0, 1}, {4, 5, 6}, {3.0f, -0.75f, 8.0f}, {2, 2, 2}};
    for (int i = 0; i < 5; i++) {
        struct vec3 r = vec3_cross(a[i], b[i]);
        printf("%.9g %.9g %.9g\n", r.x, r.y, r.z);
    }
    return 0;
}
