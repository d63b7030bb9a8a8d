#include <stdio.h>

long grid_paths(const char *grid, int w, int h);

int main(void)
{
    const char *open3 = ".........";
    const char *g1 = "...."
                     ".#.."
                     "...#"
                     "#...";
    const char *blocked = ".#"
                          "#.";
    char big[256];
    for (int i = 0; i < 256; i++)
        big[i] = '.';
    printf("%ld\n", grid_paths(open3, 3, 3));
    printf("%ld\n", grid_paths(g1, 4, 4));
    printf("%ld\n", grid_paths(blocked, 2, 2));
    printf("%ld\n", grid_paths(big, 16, 16));
    printf("%ld\n", grid_paths(big, 1, 1));
    printf("%ld\n", grid_paths(big, 17, 16));
    return 0;
}
