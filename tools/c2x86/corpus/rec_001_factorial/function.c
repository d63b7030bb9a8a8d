unsigned long long factorial(unsigned n)
{
    if (n > 20)
        return 0;
    if (n <= 1)
        return 1;
    return n * factorial(n - 1);
}
