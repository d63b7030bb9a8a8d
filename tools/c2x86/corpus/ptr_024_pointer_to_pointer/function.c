#include <stddef.h>

int find_min_ptr(long *a, int n, long **where)
{
    if (n <= 0) {
        *where = NULL;
        return -1;
    }
    long *best = a;
    for (long *p = a + 1; p != a + n; ++p)
        if (*p < *best)
            best = p;
    *where = best;
    return (int)(best - a);
}
