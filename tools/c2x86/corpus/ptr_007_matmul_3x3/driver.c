#include <stdio.h>

void matmul3(const int a[3][3], const int b[3][3], long c[3][3]);

static void show(long c[3][3])
{
    for (int i = 0; i < 3; i++)
        printf("%ld %ld %ld\n", c[i][0], c[i][1], c[i][2]);
}

int main(void)
{
    int id[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    int m[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
    int n[3][3] = {{-1, 0, 2}, {3, -4, 0}, {100000, 0, -100000}};
    long c[3][3];
    matmul3(id, m, c);
    show(c);
    matmul3(m, m, c);
    show(c);
    matmul3(n, m, c);
    show(c);
    matmul3(n, n, c);
    show(c);
    return 0;
}
