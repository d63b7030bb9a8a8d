struct ymd {
    int y;
    int m;
    int d;
};

static long days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (unsigned)((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1);
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long)doe - 719468;
}

static int valid(const struct ymd *a)
{
    static const unsigned char mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (a->m < 1 || a->m > 12 || a->d < 1)
        return 0;
    if (a->d > mdays[a->m - 1])
        return 0;
    if (a->m == 2 && a->d == 29) {
        int leap = (a->y % 4 == 0 && a->y % 100 != 0) || a->y % 400 == 0;
        return leap;
    }
    return 1;
}

long days_between(struct ymd a, struct ymd b, int *ok)
{
    *ok = valid(&a) && valid(&b);
    if (!*ok)
        return 0;
    return days_from_civil(b.y, b.m, b.d) - days_from_civil(a.y, a.m, a.d);
}
