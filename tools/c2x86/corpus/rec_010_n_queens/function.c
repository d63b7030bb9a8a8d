static int solve(int n, int row, unsigned cols, unsigned d1, unsigned d2)
{
    if (row == n)
        return 1;
    int count = 0;
    unsigned full = (1u << n) - 1u;
    unsigned avail = full & ~(cols | d1 | d2);
    while (avail) {
        unsigned bit = avail & (0u - avail);
        avail ^= bit;
        count += solve(n, row + 1, cols | bit, ((d1 | bit) << 1) & full, (d2 | bit) >> 1);
    }
    return count;
}

int n_queens(int n)
{
    if (n < 1 || n > 12)
        return 0;
    return solve(n, 0, 0, 0, 0);
}
