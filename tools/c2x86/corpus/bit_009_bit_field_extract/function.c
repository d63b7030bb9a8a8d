#include <stdint.h>

uint64_t extract_insert(uint64_t word, unsigned pos, unsigned len, uint64_t value, uint64_t *field)
{
    if (len == 0 || pos >= 64) {
        *field = 0;
        return word;
    }
    if (len > 64 - pos)
        len = 64 - pos;
    uint64_t mask = len == 64 ? ~(uint64_t)0 : (((uint64_t)1 << len) - 1);
    *field = (word >> pos) & mask;
    return (word & ~(mask << pos)) | ((value & mask) << pos);
}
