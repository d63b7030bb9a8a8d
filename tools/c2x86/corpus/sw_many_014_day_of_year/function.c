int day_of_year(int year, int month, int day)
{
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    int d = 0;
    switch (month) {
    case 12: d += 30; /* fall through */
    case 11: d += 31; /* fall through */
    case 10: d += 30; /* fall through */
    case 9: d += 31; /* fall through */
    case 8: d += 31; /* fall through */
    case 7: d += 30; /* fall through */
    case 6: d += 31; /* fall through */
    case 5: d += 30; /* fall through */
    case 4: d += 31; /* fall through */
    case 3: d += 28 + leap; /* fall through */
    case 2: d += 31; /* fall through */
    case 1: break;
    default: return -1;
    }
    return d + day;
}
