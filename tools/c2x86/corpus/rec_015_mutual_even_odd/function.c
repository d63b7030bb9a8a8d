static int on_odd(unsigned long n, int depth);

static int on_even(unsigned long n, int depth)
{
    if (n == 0 || depth > 500)
        return depth;
    n /= 2;
    return n % 2 ? on_odd(n, depth + 1) : on_even(n, depth + 1);
}

static int on_odd(unsigned long n, int depth)
{
    if (n == 1 || depth > 500)
        return depth;
    n = n * 3 + 1;
    return on_even(n, depth + 1);
}

int collatz_parity_walk(unsigned long n)
{
    if (n == 0)
        return -1;
    return n % 2 ? on_odd(n, 0) : on_even(n, 0);
}
