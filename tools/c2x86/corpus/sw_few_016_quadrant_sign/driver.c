#include <stdio.h>

long quadrant_transform(int x, int y);

int main(void)
{
    int x[] = {3, 3, -3, -3, 0, -1, 99999};
    int y[] = {4, -4, 4, -4, 0, 0, -99999};
    for (int i = 0; i < 7; i++)
        printf("(%d,%d) -> %ld\n", x[i], y[i], quadrant_transform(x[i], y[i]));
    return 0;
}
