#include <math.h>

int pages_needed(int lines, int lines_per_page, int duplex, int *sheets)
{
    if (lines <= 0 || lines_per_page <= 0) {
        *sheets = 0;
        return 0;
    }
    int pages = (int)ceil((double)lines / (double)lines_per_page);
    *sheets = duplex ? (int)ceil(pages / 2.0) : pages;
    return pages;
}
