long fib_rec(int n, long *calls)
{
    (*calls)++;
    if (n < 2)
        return n < 0 ? 0 : n;
    return fib_rec(n - 1, calls) + fib_rec(n - 2, calls);
}
