#include <stdio.h>
#include <stdint.h>

uint64_t extract_insert(uint64_t word, unsigned pos, unsigned len, uint64_t value, uint64_t *field);

int main(void)
{
    uint64_t w = 0x0123456789ABCDEFULL;
    unsigned pos[] = {0, 4, 8, 60, 0, 32, 63, 64, 10};
    unsigned len[] = {4, 8, 16, 8, 64, 32, 1, 4, 0};
    for (int i = 0; i < 9; i++) {
        uint64_t f;
        uint64_t r = extract_insert(w, pos[i], len[i], 0xF0F0F0F0F0F0F0F0ULL, &f);
        printf("pos %u len %u: field %#llx new %#llx\n", pos[i], len[i], (unsigned long long)f, (unsigned long long)r);
    }
    return 0;
}
