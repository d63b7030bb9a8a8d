static unsigned long long cat_rec(int n, unsigned long long *memo)
{
    if (n <= 1)
        return 1;
    if (memo[n])
        return memo[n];
    unsigned long long s = 0;
    for (int i = 0; i < n; i++)
        s += cat_rec(i, memo) * cat_rec(n - 1 - i, memo);
    memo[n] = s;
    return s;
}

unsigned long long catalan(int n)
{
    unsigned long long memo[36] = {0};
    if (n < 0 || n > 35)
        return 0;
    return cat_rec(n, memo);
}
