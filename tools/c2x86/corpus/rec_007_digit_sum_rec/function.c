static int digits(unsigned long n)
{
    return n < 10 ? (int)n : (int)(n % 10) + digits(n / 10);
}

int sum_digits_rec(unsigned long n, int *rounds)
{
    if (n < 10)
        return (int)n;
    (*rounds)++;
    return sum_digits_rec((unsigned long)digits(n), rounds);
}
