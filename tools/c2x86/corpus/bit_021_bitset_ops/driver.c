#include <stdio.h>
#include <stdint.h>

int bitset_count_range(uint32_t *set, int nwords, int set_lo, int set_hi, int cnt_lo, int cnt_hi);

int main(void)
{
    uint32_t s[4] = {0, 0, 0, 0};
    printf("%d\n", bitset_count_range(s, 4, 3, 40, 0, 128));
    printf("%08x %08x\n", (unsigned)s[0], (unsigned)s[1]);
    printf("%d\n", bitset_count_range(s, 4, 100, 200, 90, 110));
    printf("%08x %08x\n", (unsigned)s[2], (unsigned)s[3]);
    printf("%d\n", bitset_count_range(s, 4, -5, 2, -10, 5));
    printf("%d\n", bitset_count_range(s, 4, 0, 0, 0, 128));
    return 0;
}
