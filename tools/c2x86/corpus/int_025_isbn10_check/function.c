int isbn10_valid(const char *s)
{
    int sum = 0, count = 0;
    for (; *s; s++) {
        if (*s == '-')
            continue;
        int v;
        if (*s >= '0' && *s <= '9')
            v = *s - '0';
        else if ((*s == 'X' || *s == 'x') && count == 9)
            v = 10;
        else
            return 0;
        count++;
        if (count > 10)
            return 0;
        sum += v * (11 - count);
    }
    return count == 10 && sum % 11 == 0;
}
