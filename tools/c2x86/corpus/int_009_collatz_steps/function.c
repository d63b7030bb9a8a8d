int collatz_steps(unsigned long long n)
{
    int steps = 0;
    if (n == 0)
        return -1;
    while (n != 1) {
        if (n % 2 == 0) {
            n /= 2;
        } else {
            if (n > (18446744073709551615ULL - 1) / 3)
                return -1;
            n = 3 * n + 1;
        }
        steps++;
    }
    return steps;
}
