static int fill(char *g, int w, int h, int x, int y, char from, char to)
{
    if (x < 0 || y < 0 || x >= w || y >= h)
        return 0;
    if (g[y * w + x] != from)
        return 0;
    g[y * w + x] = to;
    return 1 + fill(g, w, h, x + 1, y, from, to) + fill(g, w, h, x - 1, y, from, to)
             + fill(g, w, h, x, y + 1, from, to) + fill(g, w, h, x, y - 1, from, to);
}

int flood_fill(char *grid, int w, int h, int x, int y, char to)
{
    if (x < 0 || y < 0 || x >= w || y >= h)
        return 0;
    char from = grid[y * w + x];
    if (from == to)
        return 0;
    return fill(grid, w, h, x, y, from, to);
}
