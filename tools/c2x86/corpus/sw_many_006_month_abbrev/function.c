#include <string.h>

int month_abbrev(int m, char *buf)
{
    const char *s;
    switch (m) {
    case 1: s = "Jan"; break;
    case 2: s = "Feb"; break;
    case 3: s = "Mar"; break;
    case 4: s = "Apr"; break;
    case 5: s = "May"; break;
    case 6: s = "Jun"; break;
    case 7: s = "Jul"; break;
    case 8: s = "Aug"; break;
    case 9: s = "Sep"; break;
    case 10: s = "Oct"; break;
    case 11: s = "Nov"; break;
    case 12: s = "Dec"; break;
    default:
        buf[0] = '\0';
        return 0;
    }
    memcpy(buf, s, 4);
    return 3;
}
