static long paths(const char *grid, int w, int r, int c, long *memo)
{
    if (r < 0 || c < 0 || grid[r * w + c] == '#')
        return 0;
    if (r == 0 && c == 0)
        return 1;
    long *m = &memo[r * w + c];
    if (*m >= 0)
        return *m;
    *m = paths(grid, w, r - 1, c, memo) + paths(grid, w, r, c - 1, memo);
    return *m;
}

long grid_paths(const char *grid, int w, int h)
{
    long memo[256];
    if (w <= 0 || h <= 0 || w * h > 256)
        return -1;
    for (int i = 0; i < w * h; i++)
        memo[i] = -1;
    return paths(grid, w, h - 1, w - 1, memo);
}
