#include <stdint.h>

int bitset_count_range(uint32_t *set, int nwords, int set_lo, int set_hi, int cnt_lo, int cnt_hi)
{
    int nbits = nwords * 32;
    for (int i = set_lo; i < set_hi && i < nbits; i++)
        if (i >= 0)
            set[i >> 5] |= 1u << (i & 31);
    int c = 0;
    for (int i = cnt_lo; i < cnt_hi && i < nbits; i++)
        if (i >= 0 && (set[i >> 5] >> (i & 31)) & 1u)
            c++;
    return c;
}
