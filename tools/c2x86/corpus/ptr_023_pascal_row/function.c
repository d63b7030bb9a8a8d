int pascal_row(unsigned long long *row, int n)
{
    if (n < 0)
        return 0;
    row[0] = 1;
    for (int i = 1; i <= n; i++) {
        row[i] = 1;
        for (int j = i - 1; j > 0; j--)
            row[j] += row[j - 1];
    }
    return n + 1;
}
