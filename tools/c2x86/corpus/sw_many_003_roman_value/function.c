static int roman_digit(char c)
{
    switch (c) {
    case 'I':
        return 1;
    case 'V':
        return 5;
    case 'X':
        return 10;
    case 'L':
        return 50;
    case 'C':
        return 100;
    case 'D':
        return 500;
    case 'M':
        return 1000;
    default:
        return 0;
    }
}

int roman_to_int(const char *s)
{
    int total = 0;
    while (*s) {
        int v = roman_digit(s[0]);
        if (v == 0)
            return -1;
        int next = s[1] ? roman_digit(s[1]) : 0;
        if (next > v) {
            total -= v;
        } else {
            total += v;
        }
        s++;
    }
    return total;
}
