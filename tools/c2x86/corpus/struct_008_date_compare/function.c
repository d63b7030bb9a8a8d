struct date {
    short year;
    unsigned char month;
    unsigned char day;
};

int date_compare(struct date a, struct date b)
{
    if (a.year != b.year)
        return a.year < b.year ? -1 : 1;
    if (a.month != b.month)
        return a.month < b.month ? -1 : 1;
    if (a.day != b.day)
        return a.day < b.day ? -1 : 1;
    return 0;
}
