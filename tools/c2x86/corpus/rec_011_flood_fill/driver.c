#include <stdio.h>
#include <string.h>

int flood_fill(char *grid, int w, int h, int x, int y, char to);

static const char *base =
    "..#....."
    "..#.###."
    "###.#.#."
    "....#.#."
    ".####.#."
    "......#.";

int main(void)
{
    char g[49];
    int starts[][2] = {{0, 0}, {7, 0}, {5, 2}, {2, 0}, {9, 9}};
    for (int i = 0; i < 5; i++) {
        memcpy(g, base, 49);
        int n = flood_fill(g, 8, 6, starts[i][0], starts[i][1], 'o');
        printf("start (%d,%d): %d\n", starts[i][0], starts[i][1], n);
        for (int r = 0; r < 6; r++)
            printf("  %.8s\n", g + r * 8);
    }
    return 0;
}
