int digit_sum(long n)
{
    unsigned long u = n < 0 ? 0UL - (unsigned long)n : (unsigned long)n;
    int s = 0;
    do {
        s += (int)(u % 10);
        u /= 10;
    } while (u != 0);
    return s;
}
