int count_divisors(unsigned n)
{
    if (n == 0)
        return 0;
    int count = 0;
    unsigned i;
    for (i = 1; (unsigned long long)i * i < n; i++) {
        if (n % i == 0)
            count += 2;
    }
    if ((unsigned long long)i * i == n)
        count += 1;
    return count;
}
