unsigned fib_mod(unsigned n, unsigned m)
{
    if (m == 0)
        return 0;
    unsigned long long a = 0, b = 1 % m;
    for (unsigned i = 0; i < n; i++) {
        unsigned long long t = (a + b) % m;
        a = b;
        b = t;
    }
    return (unsigned)a;
}
