#include <stdio.h>

int sort3(int *a, int *b, int *c);

int main(void)
{
    int t[][3] = {{1, 2, 3}, {3, 2, 1}, {2, 3, 1}, {1, 3, 2}, {5, 5, -5}, {0, 0, 0}, {-1, 7, -9}};
    for (int i = 0; i < 7; i++) {
        int n = sort3(&t[i][0], &t[i][1], &t[i][2]);
        printf("%d %d %d (%d swaps)\n", t[i][0], t[i][1], t[i][2], n);
    }
    return 0;
}
