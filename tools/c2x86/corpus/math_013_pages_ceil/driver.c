#include <stdio.h>

int pages_needed(int lines, int lines_per_page, int duplex, int *sheets);

int main(void)
{
    int l[] = {0, 1, 60, 61, 119, 120, 121, 1000000, 5};
    int p[] = {60, 60, 60, 60, 60, 60, 60, 66, 0};
    for (int i = 0; i < 9; i++) {
        int s1, s2;
        int n = pages_needed(l[i], p[i], 0, &s1);
        pages_needed(l[i], p[i], 1, &s2);
        printf("%d lines: %d pages, %d / %d sheets\n", l[i], n, s1, s2);
    }
    return 0;
}
