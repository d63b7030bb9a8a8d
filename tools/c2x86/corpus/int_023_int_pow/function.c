long long int_pow(long long base, int exp)
{
    if (exp < 0)
        return 0;
    long long result = 1;
    while (exp > 0) {
        if (exp % 2 == 1)
            result *= base;
        exp /= 2;
        if (exp > 0)
            base *= base;
    }
    return result;
}
