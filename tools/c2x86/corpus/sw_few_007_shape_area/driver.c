#include <stdio.h>

struct shape {
    int kind;
    double a;
    double b;
};

double shape_area(const struct shape *s);

int main(void)
{
    struct shape v[] = {{1, 1.0, 0.0}, {1, 2.5, 9.0}, {2, 3.0, 4.0}, {3, 3.0, 4.0}, {4, 1.0, 1.0}, {2, 0.1, 0.2}};
    for (int i = 0; i < 6; i++)
        printf("kind %d -> %.10g\n", v[i].kind, shape_area(&v[i]));
    return 0;
}
